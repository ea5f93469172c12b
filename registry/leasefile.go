package registry

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// LeaseFile is one process's handle on a lease path: it acquires, publishes
// and releases its own lease, and takes over leases judged unusable. Every
// operation that reads the file and then changes it does so while holding
// the sidecar lock ([LockPath]), so a take-over, an acquire, a publish and a
// release of one lease path never interleave, across processes.
//
// A LeaseFile is safe for concurrent use. Use it through a pointer.
type LeaseFile struct {
	// Path is the lease path (see [Path]).
	Path string
	// LockWait bounds the wait for the sidecar lock. Zero means
	// DefaultLockWait.
	LockWait time.Duration
	// FS is the file system; nil is the real one.
	FS FS

	mu   sync.Mutex
	held *Lease // the document this handle wrote, while it is ours
	term func() // releases the lock held on that document's file
}

// Held returns the document this handle holds, if any.
func (lf *LeaseFile) Held() (Lease, bool) {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.held == nil {
		return Lease{}, false
	}
	return *lf.held, true
}

// Acquire creates the lease with the complete document doc, exclusively: the
// document is written to a temporary file in the lease directory (0600,
// synced) and hard-linked to the lease name, so no reader ever sees a partial
// lease. It fails with [ErrLeaseExists] when anything is already at the lease
// path. The directory is created 0700 when missing; when that is impossible
// (a regular file where a directory should be, no permission) the error
// names the path.
func (lf *LeaseFile) Acquire(doc Lease) error { return lf.AcquireContext(context.Background(), doc) }

// AcquireContext is Acquire that stops waiting for the sidecar lock when
// ctx ends (an election cancelled by a signal), creating nothing.
func (lf *LeaseFile) AcquireContext(ctx context.Context, doc Lease) error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.held != nil {
		return ErrLeaseHeld
	}
	if doc.Schema != Schema || doc.Instance == "" {
		return fmt.Errorf("acquiring lease: document needs schema %s and an instance", Schema)
	}
	raw, err := Encode(doc)
	if err != nil {
		return err
	}
	fsys := fsOr(lf.FS)
	if err := fsys.MakeDir(filepath.Dir(lf.Path)); err != nil {
		return fmt.Errorf("creating lease directory: %w", err)
	}
	term := func() {}
	err = underLock(ctx, fsys, lf.Path, lf.Path, raw, cmp.Or(lf.LockWait, DefaultLockWait), func(tmp string) error {
		term = holdTerm(fsys, tmp)
		return fsys.Link(tmp, lf.Path, raw)
	})
	switch {
	case errors.Is(err, fs.ErrExist):
		term()
		return fmt.Errorf("%w: %s", ErrLeaseExists, lf.Path)
	case err != nil:
		term()
		return fmt.Errorf("writing lease: %w", err)
	}
	lf.held, lf.term = &doc, term
	return nil
}

// Publish records url in the lease: the whole document is rewritten to a
// temporary file and renamed over the lease, only while the file still
// carries this handle's instance. Otherwise it fails with [ErrLeaseNotOurs]
// and the handle forgets the lease: losing it is irreversible.
func (lf *LeaseFile) Publish(url string) error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.held == nil {
		return fmt.Errorf("%w: no lease acquired", ErrLeaseNotOurs)
	}
	doc := *lf.held
	doc.URL = &url
	raw, err := Encode(doc)
	if err != nil {
		return err
	}
	fsys := fsOr(lf.FS)
	term := func() {}
	err = underLock(context.Background(), fsys, lf.Path, lf.Path, raw, cmp.Or(lf.LockWait, DefaultLockWait), func(tmp string) error {
		if cur := fsys.Read(lf.Path); !cur.Holds(doc.Instance) {
			return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, lf.Path, describe(cur))
		}
		term = holdTerm(fsys, tmp)
		return fsys.Rename(tmp, lf.Path)
	})
	if err != nil {
		term()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		lf.forget()
		return fmt.Errorf("%w: %s: the lease directory is gone", ErrLeaseNotOurs, lf.Path)
	case errors.Is(err, ErrLeaseNotOurs):
		lf.forget()
		return err
	case err != nil:
		return fmt.Errorf("publishing lease: %w", err)
	}
	lf.term()
	lf.held, lf.term = &doc, term
	return nil
}

// Forget drops the lease this handle held and lost (another process took
// it over, or it was removed), without touching the disk, so that the
// handle may acquire a new one.
func (lf *LeaseFile) Forget() {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	lf.forget()
}

// forget drops the lease held, and the lock on its file.
func (lf *LeaseFile) forget() {
	if lf.held != nil {
		lf.term()
	}
	lf.held, lf.term = nil, nil
}

// holdTerm locks tmp, about to become the lease, for the lease's term
// ([FS.Hold]), and returns what releases it. Where the system will not
// lock it, the lease is not held: a judge in another pid namespace then
// takes its owner for gone, as before leases were held.
func holdTerm(fsys FS, tmp string) func() {
	if release, err := fsys.Hold(tmp); err == nil {
		return release
	}
	return func() {}
}

// Release removes the lease if, and only if, the file still carries this
// handle's instance; the comparison and the removal happen under the
// sidecar lock. Releasing nothing, or twice, is not an error. When the file
// carries another instance it is left alone and [ErrLeaseNotOurs] returned.
// The handle forgets the lease in every case.
func (lf *LeaseFile) Release() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.held == nil {
		return nil
	}
	fsys := fsOr(lf.FS)
	err := underLock(context.Background(), fsys, lf.Path, lf.Path, nil, cmp.Or(lf.LockWait, DefaultLockWait), func(string) error {
		switch cur := fsys.Read(lf.Path); {
		case cur.Found == Missing:
			return nil
		case cur.Found == Unreadable: // whose it is cannot be told: it is left, and said so
			return fmt.Errorf("releasing lease: %s cannot be read, so it is left in place: %w", lf.Path, cur.Err)
		case !cur.Holds(lf.held.Instance):
			return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, lf.Path, describe(cur))
		}
		if err := fsys.Remove(lf.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("releasing lease: %s: %w", lf.Path, err)
		}
		return nil
	})
	// Forgotten even if not removed: a handle that kept it could never
	// acquire another lease.
	lf.forget()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the whole lease directory is gone, and the lease with it
	}
	return err
}

// TakeOver removes the lease that judged describes, in one critical section
// under the sidecar lock: the path is read again and removed only if it
// still holds exactly what was judged (same kind, same bytes, same file).
// A symbolic link is unlinked itself, never its target. It reports whether
// it removed the file; false with a nil error means the lease changed or
// vanished since it was judged: observe it again. Of several processes
// taking over one judged lease at most one removes it, and of those that
// then Acquire at most one succeeds.
//
// A busy lease (its server silent, its owner alive) may be taken over too:
// the caller has waited out the busy grace on its own clock (the machine
// does); the lease must still be the one judged busy.
func (lf *LeaseFile) TakeOver(judged Observation) (bool, error) {
	return lf.TakeOverUnless(judged, nil)
}

// TakeOverUnless is TakeOver that removes nothing when dropped, asked once
// the lock is held, says so: a caller that stopped waiting for the lock
// (its election ended) does not take the lease over after all, unseen.
func (lf *LeaseFile) TakeOverUnless(judged Observation, dropped func() bool) (bool, error) {
	if !judged.Verdict.Class.TakesOver() && judged.Verdict.Class != Busy {
		return false, fmt.Errorf("%w: it is %s", ErrNotTakeable, judged.Verdict.Class)
	}
	if judged.Path != "" && judged.Path != lf.Path {
		return false, fmt.Errorf("%w: observed %s, not %s", ErrNotTakeable, judged.Path, lf.Path)
	}
	fsys := fsOr(lf.FS)
	removed := false
	err := underLock(context.Background(), fsys, lf.Path, lf.Path, nil, cmp.Or(lf.LockWait, DefaultLockWait), func(string) error {
		if cur := fsys.Read(lf.Path); cur.Found == Missing || !cur.Same(judged.Snapshot) || dropped != nil && dropped() {
			return nil
		}
		if err := fsys.Remove(lf.Path); err != nil {
			return fmt.Errorf("removing the unusable lease at %s: %w", lf.Path, err)
		}
		removed = true
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // the lease, or its whole directory, is gone
	}
	return removed, err
}

// writeSynced writes raw to f, syncs and closes it.
func writeSynced(f *os.File, raw []byte) error { return writeClosed(f, raw, true) }

// writeClosed writes raw to f, syncs it when sync says so, and closes it.
func writeClosed(f *os.File, raw []byte, sync bool) error {
	_, err := f.Write(raw)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing lease: %w", err)
	}
	return nil
}

// createComplete creates path holding raw, only where nothing is there: by
// a hard link (link, os.Link but in tests) to tmp, which holds raw, synced, so that the file appears
// complete or not at all. Where the file system has no hard links (FAT,
// some network shares) it creates path exclusively and writes raw into it:
// a reader may then see it empty for a moment and judge it empty, but the
// caller holds the sidecar lock meanwhile, so a take-over of that judgement
// waits for it and then finds the file complete, and removes nothing.
func createComplete(link func(oldname, newname string) error, tmp, path string, raw []byte) error {
	linkErr := link(tmp, path)
	if linkErr == nil || errors.Is(linkErr, fs.ErrExist) {
		return linkErr
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("creating lease: %w (and linking: %v)", err, linkErr)
	}
	if err := writeClosed(f, raw, false); err != nil {
		_ = unlink(path)
		return err
	}
	return nil
}

// describe names what a snapshot holds, for error messages.
func describe(s Snapshot) string {
	switch s.Found {
	case Missing:
		return "nothing"
	case Regular:
		if doc, problem := decode(s.Raw); problem == "" {
			return fmt.Sprintf("the lease of instance %q (pid %d)", doc.Instance, doc.PID)
		}
		return "a file that is not a lease"
	case Unreadable:
		return fmt.Sprintf("something unreadable (%v)", s.Err)
	default:
		return "a " + s.Found.String()
	}
}
