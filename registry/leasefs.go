package registry

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// FS is every file operation of the lease protocol: what [LeaseFile],
// [Journal] and [Observer] do to the lease directory goes through one, so
// that the protocol's real code can be model-checked over a simulated
// directory and clock (internal/leasecheck). A nil FS is the real file
// system; the per-OS facts stay in leasefs_*.go.
type FS interface {
	// Read examines path as [Read] does; it never fails.
	Read(path string) Snapshot
	// MakeDir creates the lease directory dir (0700) when it is missing.
	MakeDir(dir string) error
	// WriteTemp writes raw to a new temporary file beside path (0600),
	// synced when what is at path is kept across a crash, and returns its
	// name.
	WriteTemp(path string, raw []byte) (string, error)
	// Link puts the complete file tmp, holding raw, at path, failing with
	// an error matching fs.ErrExist when anything is there.
	Link(tmp, path string, raw []byte) error
	// Rename renames tmp over path, atomically.
	Rename(tmp, path string) error
	// Hold locks the file at path, which nobody else has open yet, until
	// release: an owner holds its lease so for its term, on Linux
	// ([Snapshot.Holder]); elsewhere it holds nothing.
	Hold(path string) (release func(), err error)
	// Remove removes the name path itself, never a link's target.
	Remove(path string) error
	// Lock takes the sidecar lock of the lease at leasePath, waiting at
	// most wait, and not once ctx ends; the holder's death releases it too.
	Lock(ctx context.Context, leasePath string, wait time.Duration) (unlock func(), err error)
	// OpenAppend opens the file at path to append records to it.
	OpenAppend(path string) (io.WriteCloser, error)
}

// osFS is the real file system.
type osFS struct{}

// durable reports whether what is written at path is synced to disk, its
// name's changes too: the shared state's, never the lease's (doc.go says
// why).
func durable(path string) bool { return strings.HasSuffix(path, stateSuffix) }

func fsOr(fsys FS) FS {
	if fsys == nil {
		return osFS{}
	}
	return fsys
}

func (osFS) Read(path string) Snapshot { return Read(path) }
func (osFS) MakeDir(dir string) error  { return makeLeaseDir(dir) }

func (osFS) WriteTemp(path string, raw []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", err
	}
	if err := writeClosed(f, raw, durable(path)); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (osFS) Link(tmp, path string, raw []byte) error {
	return synced(path, createComplete(os.Link, tmp, path, raw))
}

func (osFS) Rename(tmp, path string) error { return synced(path, replace(tmp, path)) }
func (osFS) Remove(path string) error      { return synced(path, unlink(path)) }

func (osFS) Hold(path string) (func(), error) {
	f, err := holdFile(path)
	if err != nil || f == nil {
		return func() {}, err
	}
	return func() { f.Close() }, nil
}

func (osFS) Lock(ctx context.Context, leasePath string, wait time.Duration) (func(), error) {
	l, err := lockFile(ctx, LockPath(leasePath), wait)
	if err != nil {
		return nil, err
	}
	return func() { l.Close() }, nil
}

func (osFS) OpenAppend(path string) (io.WriteCloser, error) {
	f, err := openAppend(path)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}

// synced makes the change of path's name durable when err is nil and
// path is durable (best effort), and returns err.
func synced(path string, err error) error {
	if err == nil && durable(path) {
		if d, derr := os.Open(filepath.Dir(path)); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return err
}

// underLock writes raw, when it is not nil, to a temporary file beside
// path, takes the sidecar lock of the lease at lease (waiting for it until
// ctx ends at most), and runs critical with the temporary file's name; then
// it releases the lock and removes the temporary file (already renamed or
// linked away, usually).
func underLock(ctx context.Context, fsys FS, lease, path string, raw []byte, wait time.Duration, critical func(tmp string) error) error {
	var tmp string
	if raw != nil {
		var err error
		if tmp, err = fsys.WriteTemp(path, raw); err != nil {
			return err
		}
		defer fsys.Remove(tmp)
	}
	unlock, err := fsys.Lock(ctx, lease, wait)
	if err != nil {
		return err
	}
	defer unlock()
	return critical(tmp)
}
