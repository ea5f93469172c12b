package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Found is what is at a lease path.
type Found int

const (
	// Missing: nothing at the path.
	Missing Found = iota
	// Regular: a regular file; Snapshot.Raw holds its bytes.
	Regular
	// Symlink: a symbolic link, never followed; Snapshot.Raw holds its target.
	Symlink
	// Directory: a directory.
	Directory
	// Special: a named pipe, socket or device; never opened.
	Special
	// Unreadable: the path could not be examined or read; Snapshot.Err says
	// why (for example ENOTDIR when a parent is a regular file, or EACCES).
	Unreadable
)

func (f Found) String() string {
	if f < Missing || f > Unreadable {
		f = Unreadable
	}
	return [...]string{"missing", "regular file", "symbolic link", "directory", "special file", "unreadable"}[f]
}

// Snapshot is what a lease path held when it was read.
type Snapshot struct {
	Found Found
	// Raw is the file's bytes (at most MaxLeaseSize+1), or a symbolic link's
	// target.
	Raw []byte
	// Err is the OS reason for Unreadable.
	Err error
	// Holder tells, for a regular file, whether another process holds a
	// lock on it, as a lease's owner does for its term ([FS.Hold]).
	Holder proc.Liveness

	id fileID
}

// fileID is the (device, inode) pair of what was read (on Windows the
// volume and file index); zero when unknown.
type fileID struct{ dev, ino uint64 }

// conflicts reports whether a and b are both known and differ.
func (a fileID) conflicts(b fileID) bool {
	return a != fileID{} && b != fileID{} && a != b
}

// errLinked is what opening a lease path that is a link gives: links are
// never followed.
var errLinked = errors.New("a link is never followed")

// Holds reports whether the snapshot is a regular file carrying instance.
func (s Snapshot) Holds(instance string) bool {
	return s.Found == Regular && Holds(s.Raw, instance)
}

// Same reports whether s and o hold the same thing: the same kind, the same
// bytes and, when both are known, the same file.
func (s Snapshot) Same(o Snapshot) bool {
	return s.Found == o.Found && bytes.Equal(s.Raw, o.Raw) && !s.id.conflicts(o.id)
}

// Read examines the lease path without following a symbolic link and without
// ever blocking on a special file. It never fails: problems are reported as
// Unreadable with the OS reason.
func Read(path string) Snapshot {
	var holder proc.Liveness
	s := readFile(path, MaxLeaseSize, func(f *os.File, _ fs.FileInfo) { holder = holderOf(f) })
	s.Holder = holder
	return s
}

// readFile reads path as [Read] does, at most limit+1 bytes of it; opened
// is given the regular file opened and its stat.
func readFile(path string, limit int64, opened func(*os.File, fs.FileInfo)) Snapshot {
	for range 3 {
		if s, retry := readOnce(path, limit, opened); !retry {
			return s
		}
	}
	return Snapshot{Found: Unreadable, Err: fmt.Errorf("%s kept changing while it was read", path)}
}

// readOnce reads path once; retry is true when the path changed between the
// Lstat and the open (replaced by a link, removed, renamed over).
func readOnce(path string, limit int64, opened func(*os.File, fs.FileInfo)) (s Snapshot, retry bool) {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := BlockedPath(path); err != nil {
			return Snapshot{Found: Unreadable, Err: err}, false
		}
		return Snapshot{Found: Missing}, false
	case err != nil:
		return Snapshot{Found: Unreadable, Err: err}, false
	}
	switch mode := fi.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return Snapshot{}, true
		}
		return Snapshot{Found: Symlink, Raw: []byte(target), id: idOf(fi)}, false
	case mode.IsDir():
		return Snapshot{Found: Directory, id: idOf(fi)}, false
	case !mode.IsRegular():
		return Snapshot{Found: Special, id: idOf(fi)}, false
	}
	f, err := openNoFollow(path)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errLinked):
		return Snapshot{}, true
	case err != nil:
		return Snapshot{Found: Unreadable, Err: err}, false
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return Snapshot{Found: Unreadable, Err: err}, false
	}
	id := openedID(f, ofi)
	if !ofi.Mode().IsRegular() || id.conflicts(idOf(fi)) {
		return Snapshot{}, true
	}
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return Snapshot{Found: Unreadable, Err: err}, false
	}
	opened(f, ofi)
	return Snapshot{Found: Regular, Raw: raw, id: id}, false
}
