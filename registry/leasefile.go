package registry

import (
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

	mu   sync.Mutex
	held *Lease // the document this handle wrote, while it is ours
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
func (lf *LeaseFile) Acquire(doc Lease) error {
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
	dir := filepath.Dir(lf.Path)
	if err := makeLeaseDir(dir); err != nil {
		return fmt.Errorf("creating lease directory: %w", err)
	}
	tmp, err := lf.writeTemp(raw)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)

	l, err := acquireLock(lf.Path, lf.lockWait())
	if err != nil {
		return err
	}
	defer l.release()
	if err := createComplete(os.Link, tmp, lf.Path, raw); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrLeaseExists, lf.Path)
		}
		return err
	}
	syncDir(dir)
	lf.held = &doc
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
	tmp, err := lf.writeTemp(raw)
	if errors.Is(err, fs.ErrNotExist) {
		lf.held = nil
		return fmt.Errorf("%w: %s: the lease directory is gone", ErrLeaseNotOurs, lf.Path)
	}
	if err != nil {
		return err
	}
	defer os.Remove(tmp)

	l, err := acquireLock(lf.Path, lf.lockWait())
	if err != nil {
		return err
	}
	defer l.release()
	if cur := Read(lf.Path); !cur.Holds(doc.Instance) {
		lf.held = nil
		return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, lf.Path, describe(cur))
	}
	if err := replace(tmp, lf.Path); err != nil {
		return fmt.Errorf("publishing lease: %w", err)
	}
	syncDir(filepath.Dir(lf.Path))
	lf.held = &doc
	return nil
}

// Forget drops the lease this handle held and lost (another process took
// it over, or it was removed), without touching the disk, so that the
// handle may acquire a new one.
func (lf *LeaseFile) Forget() {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	lf.held = nil
}

// Release removes the lease if, and only if, the file still carries this
// handle's instance; the comparison and the removal happen under the
// sidecar lock. Releasing nothing, or twice, is not an error. When the file
// carries another instance it is left alone and [ErrLeaseNotOurs] returned.
func (lf *LeaseFile) Release() error {
	lf.mu.Lock()
	defer lf.mu.Unlock()
	if lf.held == nil {
		return nil
	}
	l, err := acquireLock(lf.Path, lf.lockWait())
	if errors.Is(err, fs.ErrNotExist) {
		// The whole lease directory is gone, and the lease with it.
		lf.held = nil
		return nil
	}
	if err != nil {
		return err
	}
	defer l.release()
	cur := Read(lf.Path)
	switch {
	case cur.Found == Missing:
		lf.held = nil
		return nil
	case !cur.Holds(lf.held.Instance):
		lf.held = nil
		return fmt.Errorf("%w: %s holds %s", ErrLeaseNotOurs, lf.Path, describe(cur))
	}
	if err := unlink(lf.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("releasing lease: %s: %w", lf.Path, err)
	}
	syncDir(filepath.Dir(lf.Path))
	lf.held = nil
	return nil
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
	if !judged.Verdict.TakeOver && judged.Verdict.Class != Busy {
		return false, fmt.Errorf("%w: it is %s", ErrNotTakeable, judged.Verdict.Class)
	}
	if judged.Path != "" && judged.Path != lf.Path {
		return false, fmt.Errorf("%w: observed %s, not %s", ErrNotTakeable, judged.Path, lf.Path)
	}
	l, err := acquireLock(lf.Path, lf.lockWait())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // the lease directory is gone, and the lease with it
	}
	if err != nil {
		return false, err
	}
	defer l.release()
	cur := Read(lf.Path)
	if cur.Found == Missing || !cur.Same(judged.Snapshot) {
		return false, nil
	}
	if err := unlink(lf.Path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("removing the unusable lease at %s: %w", lf.Path, err)
	}
	syncDir(filepath.Dir(lf.Path))
	return true, nil
}

func (lf *LeaseFile) lockWait() time.Duration {
	if lf.LockWait > 0 {
		return lf.LockWait
	}
	return DefaultLockWait
}

// writeTemp writes raw to a new hidden temporary file beside the lease
// (0600, synced) and returns its path.
func (lf *LeaseFile) writeTemp(raw []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(lf.Path), "."+filepath.Base(lf.Path)+".*.tmp")
	if err != nil {
		return "", fmt.Errorf("writing lease: %w", err)
	}
	if err := writeSynced(f, raw); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// writeSynced writes raw to f, syncs and closes it.
func writeSynced(f *os.File, raw []byte) error {
	_, err := f.Write(raw)
	if err == nil {
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
	if err := writeSynced(f, raw); err != nil {
		_ = unlink(path)
		return err
	}
	return nil
}

// syncDir makes a link, rename or unlink in dir durable; best effort.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
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
