package registry

import (
	"context"
	"errors"
	"fmt"
	"os"
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

// lockFile takes an exclusive lock on the file at p (created if need be),
// waiting at most wait, and returns the file it holds the lock on (flock
// on Unix, LockFileEx on Windows: leasefs_*.go). The system releases the
// lock when the file is closed, including when the holder dies. A link at
// p is refused. When ctx ends it stops waiting, with ctx's cause: a
// process signalled meanwhile dies at once, not once the wait is over.
func lockFile(ctx context.Context, p string, wait time.Duration) (*os.File, error) {
	f, err := openLockFile(p)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if fi, err := f.Stat(); err == nil {
		if why := notMine(f, fi, p); why != "" { // trusted as the lease is (docs/security.md)
			f.Close()
			return nil, errors.New(why)
		}
	}
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		held, err := tryLock(f)
		switch {
		case err != nil:
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, err)
		case held:
			return f, nil
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s (waited %s)", ErrLockTimeout, p, wait)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", p, context.Cause(ctx))
		case <-time.After(min(pause, time.Until(deadline))):
		}
		pause = min(2*pause, 25*time.Millisecond)
	}
}
