//go:build linux

package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A watcher whose inotify queue overflowed while .ai/local was swapped
// for an identical one (the swap's events lost with the overflow) must
// still see the lease replaced in the new directory afterwards: the
// overflow may have lost the moves of directories on the lease's way, so
// they must be watched anew, or a take-over there goes unseen until the
// fallback read (a minute for a leaseholder; R6 says within a second).
func TestWatch_SeesTheLeaseReplacedAfterAnOverflowLostASwapOfItsWay(t *testing.T) {
	path := leasePath(t)
	ours := docBytes(t, nil)
	writeFile(t, path, ours)
	child := startChild(t, "watch", path)
	pid := child.Cmd.Process.Pid
	if got, want := child.Line(t), fmt.Sprintf("change %s %q", Regular, ours); got != want {
		t.Fatalf("first change %q, want %q", got, want)
	}

	// The watcher stops reading (a stopped leaseholder, or one too busy to
	// read): its queue fills and overflows.
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo // the stop, reported to this parent without consuming it
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("waiting for pid %d to stop: %v", pid, err)
	}
	ai := filepath.Join(filepath.Dir(path), "..", "..", "..")
	queued := 16384 // fs.inotify.max_queued_events, unless this system says otherwise
	if raw, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		fmt.Sscan(string(raw), &queued)
	}
	for i := range queued + 4096 { // more events than the queue holds: it overflows
		if err := os.WriteFile(filepath.Join(ai, fmt.Sprintf("f%d", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// .ai/local swapped for an identical one while the queue is full.
	local := filepath.Join(ai, "local")
	if err := os.Rename(local, local+".old"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, ours)
	if err := unix.Kill(pid, unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// The overflow makes it read the lease: the same bytes, another file.
	if got, want := child.Line(t), fmt.Sprintf("change %s %q", Regular, ours); got != want {
		t.Fatalf("after the overflow %q, want %q", got, want)
	}

	// Another process takes the lease over, in the new directory.
	theirs := docBytes(t, func(l *Lease) { l.Instance = "ffffffffffffffffffffffffffffffff" })
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	writeFile(t, tmp, theirs)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got, want := child.Line(t), fmt.Sprintf("change %s %q", Regular, theirs); got != want {
		t.Fatalf("after the take-over %q, want %q", got, want)
	}
}
