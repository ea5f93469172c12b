//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A process that holds the lease's lock as a client starts (one stopped in
// the middle of writing the lease, say) is waited for, not taken for an
// unusable lease directory: the client serves the checkout once the lock
// is let go, within its election, and is never served alone meanwhile.
func TestALeaseLockHeldAsAClientStartsIsWaitedFor(t *testing.T) {
	dir := checkout(t)
	f := holdLeaseLock(t, dir)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	waitShared(t, a, "waiting for the process writing the lease to finish it")
	if err := f.Close(); err != nil { // the lock goes with it
		t.Fatal(err)
	}
	serverURL(t, a)
}

// `serve`, which has no client to serve alone, says so while it waits for
// a lease lock held past its election's bound, and ends as it said: its
// wait line does not promise a client served alone.
func TestServeSaysItEndsWhenALeaseLockOutlastsItsElection(t *testing.T) {
	dir := checkout(t)
	holdLeaseLock(t, dir)
	p := start(t, dir, "serve", "--http-port", "0", "--election-bound", "3s", "--busy-grace", "2s", "--probe-timeout", "1s")
	line, err := p.WaitLog(ctx(t), "waiting for the process writing the lease to finish it")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "served alone") || !strings.Contains(line, "then this process ends") {
		t.Fatalf("serve, which has no client, says what it does once its wait is over as a client would:\n%s", line)
	}
	exitsWith(t, p, 13)
}

// holdLeaseLock takes the lease's lock of dir, as a process stopped while
// it writes the lease holds it, until the test ends or the file is closed.
func holdLeaseLock(t *testing.T, dir string) *os.File {
	t.Helper()
	lock := leasePath(dir) + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	return f
}
