//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A process that holds the lease's lock as a client starts (one stopped in
// the middle of writing the lease, say) is waited for, not taken for an
// unusable lease directory: the client serves the checkout once the lock
// is let go, within its election, and is never served alone meanwhile.
func TestALeaseLockHeldAsAClientStartsIsWaitedFor(t *testing.T) {
	dir := checkout(t)
	lock := leasePath(dir) + ".lock"
	if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(lock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	waitShared(t, a, "waiting for the process writing the lease to finish it")
	if err := f.Close(); err != nil { // the lock goes with it
		t.Fatal(err)
	}
	serverURL(t, a)
}
