//go:build unix

package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// On Unix the take-over lock is flock(2), which the kernel releases with
// the last descriptor, also when the holder dies; links are never followed
// (O_NOFOLLOW), and a special file never blocks a read (O_NONBLOCK).

// openLockFile opens (creating it) the sidecar lock file, refusing a link.
func openLockFile(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
}

// tryLock takes an exclusive lock on f without waiting: false when another
// holds it.
func tryLock(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// openNoFollow opens path to read it; a link at path is refused with an
// error matching [errLinked].
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errLinked
	}
	return f, err
}

// idOf returns the (device, inode) pair of fi.
func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	return fileID{}
}

// directoryID is the (device, inode) pair of the directory at path.
func directoryID(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.IsDir() {
		return fileID{}, false
	}
	return idOf(fi), true
}

// openedID is the identity of the file f, opened, whose stat is fi.
func openedID(_ *os.File, fi fs.FileInfo) fileID { return idOf(fi) }

// unlink removes the name path itself (a link, never its target; never a
// directory).
func unlink(path string) error {
	if err := syscall.Unlink(path); err != nil {
		return &fs.PathError{Op: "unlink", Path: path, Err: err}
	}
	return nil
}

// replace renames tmp over path, atomically.
func replace(tmp, path string) error { return os.Rename(tmp, path) }

// openAppend opens the state at path to append to it, refusing a link and
// anything but a regular file (O_NONBLOCK: a pipe put there never blocks
// the open).
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}

// notMine says why the opened file at path, whose stat is fi, is not this
// user's alone (another owner, or other users may write it), or "".
func notMine(_ *os.File, fi fs.FileInfo, path string) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if me := os.Geteuid(); ok && int(st.Uid) != me {
		return fmt.Sprintf("%s belongs to another user (uid %d; this process runs as uid %d)", path, st.Uid, me)
	}
	if perm := fi.Mode().Perm(); perm&0o002 != 0 {
		return fmt.Sprintf("%s is writable by other users (mode %v)", path, perm)
	}
	return ""
}
