package registry

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// DefaultLockWait bounds the wait for the sidecar lock. The lock is held only
// for a read and a link, rename or unlink; a holder that keeps it longer is
// stopped or stuck.
const DefaultLockWait = 2 * time.Second

// LockPath returns the sidecar lock file of a lease path. The lock file is
// created on first use (0600, empty) and never removed: removing it would let
// two processes lock two different files.
func LockPath(leasePath string) string { return leasePath + ".lock" }

// lock is a held flock(2) on the sidecar file. The kernel releases it when
// the file is closed, including when the holder dies.
type lock struct{ f *os.File }

// acquireLock takes an exclusive flock on the sidecar of leasePath, waiting
// at most wait. A symbolic link at the lock path is refused (O_NOFOLLOW).
func acquireLock(leasePath string, wait time.Duration) (*lock, error) {
	p := LockPath(leasePath)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lease lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return &lock{f: f}, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s (waited %s)", ErrLockTimeout, p, wait)
		}
		time.Sleep(min(pause, time.Until(deadline)))
		pause = min(2*pause, 25*time.Millisecond)
	}
}

// release drops the lock by closing the file.
func (l *lock) release() { l.f.Close() }
