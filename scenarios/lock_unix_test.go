//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A process that holds the lease's lock as a client starts (one stopped in
// the middle of writing the lease, say) is waited for, not taken for an
// unusable lease directory: the client serves the checkout once the lock
// is let go, within its election, and is never served alone meanwhile.
func TestALeaseLockHeldAsAClientStartsIsWaitedFor(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// A client sent SIGTERM while it waits for the lease's lock, held by a
// process stopped while it writes the lease, dies of it at once, as a host
// ending it expects: it does not wait the lock out first. The clock is
// another client, which began waiting for the lock before the signal: it
// has not given up waiting when the first has exited. The lock let go,
// that other client serves the checkout: the first left nothing behind.
func TestAClientSignalledWhileItWaitsForTheLeaseLockDiesAtOnce(t *testing.T) {
	dir := checkout(t)
	f := holdLeaseLock(t, dir)
	clock := shared(t, dir)
	waitLeaseTemps(t, dir, 1) // it waits for the lock
	a := shared(t, dir)
	waitLeaseTemps(t, dir, 2) // and so does a, handling signals by then
	a.Signal(syscall.SIGTERM)
	if exit, err := a.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
	if clock.CountLogs("waiting for the process writing the lease to finish it") != 0 {
		t.Fatal("the signalled client waited the lease's lock out before it died: a client that began waiting earlier had given up waiting already")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	serverURL(t, clock)
}

// waitLeaseTemps waits until n processes write the lease of dir: each has
// its temporary file beside it, from before it waits for the lease's lock
// until it is done. It looks every few milliseconds, as waitGone does.
func waitLeaseTemps(t *testing.T, dir string, n int) {
	t.Helper()
	c := ctx(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	pattern := filepath.Join(filepath.Dir(leasePath(dir)), "."+filepath.Base(leasePath(dir))+".*.tmp")
	for {
		if temps, _ := filepath.Glob(pattern); len(temps) == n {
			return
		}
		select {
		case <-tick.C:
		case <-c.Done():
			t.Fatalf("waiting for %d processes to write the lease of %s", n, dir)
		}
	}
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
