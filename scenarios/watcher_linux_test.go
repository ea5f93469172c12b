package scenarios

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
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

// A client served alone watches the layer itself; once it joins the
// shared server its process only bridges, and holds no watch (no inotify
// instance, no rebuild on every edit) for the rest of its life. When it
// serves again, here as it takes the lease over, it watches the layer
// anew, from the files as they are: the generation the last server gave
// them, not one for each edit it missed.
func TestAClientServedAloneStopsWatchingTheLayerWhenItJoins(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, usable := aloneFromTheStart(t, dir)
	pid := a.Cmd.Process.Pid
	instancesBecome(t, pid, 1, "served alone")

	d := leaseholderUnder(t, dir, usable, peersOf(t, a).Caller)
	if _, err := a.WaitLog(ctx(t), "the layer is no longer watched here"); err != nil {
		t.Fatal(err)
	}
	instancesBecome(t, pid, 0, "joined")
	editTold(t, dir, d, "5. Is the README still true?\n")
	if g := generationTold(t, d); g != 2 {
		t.Fatalf("the leaseholder serves generation %d after one change, want 2", g)
	}

	d.Signal(syscall.SIGKILL)
	d.Wait(ctx(t))
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	instancesBecome(t, pid, 1, "took over")
	if g := generationTold(t, a); g != 2 {
		t.Errorf("taken over, the same files are generation %d, want 2 as before", g)
	}
	editTold(t, dir, a, "6. Are the tests still true?\n")
	if g := generationBecomes(t, a, 3); g != 3 {
		t.Errorf("generation %d after the next change, want 3", g)
	}
}

// generationBecomes is the generation p is told once it is want or more:
// each notice that the layer's lists changed is a moment to ask again (the
// one a client that took over is told, that they may have, can come after
// an edit and before the edit's own).
func generationBecomes(t *testing.T, p *mcpclient.Process, want int) int {
	t.Helper()
	for {
		from := len(p.Frames())
		if g := generationTold(t, p); g >= want {
			return g
		}
		if _, err := p.WaitFrameAfter(ctx(t), "resources/list_changed", from, func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
		}); err != nil {
			t.Fatalf("generation %d is told, never %d: %v", generationTold(t, p), want, err)
		}
	}
}

// A client answered in process while its election ran (its leaseholder
// stopped) watched the layer for those answers; once attached, it no
// longer does.
func TestAClientAnsweredWhileItElectedStopsWatchingTheLayerWhenItAttaches(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	stop(t, a)
	b := shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m")
	initialize(t, b, "gemini-cli")
	if _, err := b.WaitLog(ctx(t), "answering this client's handshake and the layer's lists and reads in process while the election runs"); err != nil {
		t.Fatal(err)
	}
	instancesBecome(t, b.Cmd.Process.Pid, 1, "answering early")
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitLog(ctx(t), "the layer is no longer watched here"); err != nil {
		t.Fatal(err)
	}
	instancesBecome(t, b.Cmd.Process.Pid, 0, "attached")
}

// A leaseholder whose lease was taken over while a plain session stayed
// on its server keeps watching the layer for that session while its own
// client bridges to the new server; once that session ended and its old
// server stopped, the process only bridges and holds no watch.
func TestAFormerLeaseholderStopsWatchingTheLayerOnceItsOldServerStops(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	old := connect(t, dir)
	plain := &plainSession{t: t, c: old, sid: openPlainSession(t, old)}
	stop(t, a)
	b := shared(t, dir, "--busy-grace", "1s", "--probe-timeout", "500ms")
	initialize(t, b, "codex")
	serverURL(t, b)
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "re-attached to the shared server"); err != nil {
		t.Fatal(err)
	}
	pid := a.Cmd.Process.Pid
	instancesBecome(t, pid, 1, "bridging while its old server serves a session")
	plain.end()
	if _, err := a.WaitLog(ctx(t), "shared server stopped with its last session"); err != nil {
		t.Fatal(err)
	}
	instancesBecome(t, pid, 0, "bridging, its old server stopped")
}

// instancesBecome waits for pid to hold want inotify instances, once the
// process said it became what (a watch is put or closed by a goroutine
// that says nothing).
func instancesBecome(t *testing.T, pid, want int, what string) {
	t.Helper()
	c := ctx(t)
	for {
		instances, _ := inotifyOf(t, pid)
		if instances == want {
			return
		}
		select {
		case <-c.Done():
			t.Fatalf("%s, the process holds %d inotify instances, want %d", what, instances, want)
		case <-time.After(10 * time.Millisecond): // no event tells
		}
	}
}
