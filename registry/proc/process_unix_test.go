//go:build unix

package proc

import (
	"errors"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A child that exited but was not reaped (a zombie) answers signal 0, yet it
// is gone: a leaseholder killed -9 under a parent that does not reap must
// not pass for alive for the whole busy grace, nor the fleet's registered
// server for one the system could not tell about. Its server is not
// probed either.
func TestAlive_AZombieIsGone(t *testing.T) {
	c := startChild(t, "sleep")
	c.Expect(t, "ready")
	pid := c.Cmd.Process.Pid
	start, err := ProcessStart(pid)
	if err != nil {
		t.Fatal(err)
	}
	boot, _ := BootID()
	if err := c.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Wait for the kernel to make it a zombie: an event, read from /proc.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := ProcessStart(pid)
		if errors.Is(err, ErrProcessEnded) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed child never became a zombie: %v", err)
		}
		runtime.Gosched()
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("a zombie answers signal 0, this one said %v", err)
	}
	if got := (Env{}).Alive(pid, start, boot); got != OwnerGone {
		t.Errorf("a zombie is %s, want gone", got)
	}
	// The fleet's view agrees: no process has the pid, which is a fact;
	// the one that had it has ended, and its server answers nothing.
	if got := (Env{}).Presence(pid); got != (Presence{Known: true, Ended: start}) {
		t.Errorf("a zombie's presence is %+v, want known not to exist, ended", got)
	}
	if !(Env{}).Ending(pid, start) || (Env{}).Ending(pid, start+1) {
		t.Error("a zombie is not told ending as the owner that started when it did, and only as that one")
	}
	c.Cmd.Wait()
}
