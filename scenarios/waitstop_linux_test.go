package scenarios

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// stop sends SIGSTOP to p and returns once p is stopped: the signal is
// delivered asynchronously, and a call sent meanwhile would still be
// answered. waitid with WNOWAIT reports the stop to this process (p's
// parent) without consuming it, so p's own Wait still sees its exit. p is
// continued at the test's end, if nothing continued it before.
func stop(t *testing.T, p *mcpclient.Process) {
	t.Helper()
	t.Cleanup(func() { p.Signal(unix.SIGCONT) })
	pid := p.Cmd.Process.Pid
	if err := unix.Kill(pid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WNOWAIT, nil); err != nil {
		t.Fatalf("waiting for pid %d to stop: %v", pid, err)
	}
}
