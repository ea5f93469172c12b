package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A leaseholder watches its lease and its layer through one inotify
// instance: instances are few (128 a user by default), and the kernel
// tears each down before a process killed -9 is reaped, each slower than
// the last (B4). Both watches work through it: the layer's edit is heard,
// and so is the lease's removal, before the lease's fallback reading
// (a minute) could have found it.
func TestALeaseholderWatchesThroughOneInotifyInstance(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	pid := a.Cmd.Process.Pid
	leaseDir, err := os.Stat(filepath.Dir(leasePath(dir)))
	if err != nil {
		t.Fatal(err)
	}
	leaseIno := leaseDir.Sys().(*syscall.Stat_t).Ino
	c := ctx(t)
	for {
		instances, inodes := inotifyOf(t, pid)
		if inodes[leaseIno] { // the lease's watch is in place beside the layer's
			if instances != 1 {
				t.Fatalf("the leaseholder holds %d inotify instances, want 1", instances)
			}
			break
		}
		select {
		case <-c.Done():
			t.Fatalf("the lease's directory was never watched (%d inotify instances)", instances)
		case <-time.After(10 * time.Millisecond): // the watch is put by a goroutine that says nothing
		}
	}

	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	if _, err := a.WaitLog(ctx(t), "layer rebuilt"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	// within a step's bound (30 s), shorter than the fallback's minute
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's: the lease file was removed"); err != nil {
		t.Fatal(err)
	}
}

// inotifyOf counts pid's inotify instances and gathers the inodes they
// watch (/proc/PID/fdinfo).
func inotifyOf(t *testing.T, pid int) (instances int, inodes map[uint64]bool) {
	t.Helper()
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	inodes = map[uint64]bool{}
	for _, fd := range fds {
		if target, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + fd.Name()); target != "anon_inode:inotify" {
			continue
		}
		instances++
		info, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + fd.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(info), "\n") {
			for _, field := range strings.Fields(line) {
				if hex, ok := strings.CutPrefix(field, "ino:"); ok && strings.HasPrefix(line, "inotify") {
					if n, err := strconv.ParseUint(hex, 16, 64); err == nil {
						inodes[n] = true
					}
				}
			}
		}
	}
	return instances, inodes
}
