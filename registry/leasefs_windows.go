package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// On Windows the take-over lock is LockFileEx on the sidecar file (locks
// are mandatory there, so the lease itself is never locked: readers must
// always be able to read it); the system releases it when the handle
// closes, also when the holder dies. A reparse point (symbolic link,
// junction) is opened as itself and refused, never followed. Renaming over
// a file that another process reads fails for a moment: it is retried.

// openLockFile opens (creating it) the sidecar lock file, refusing a
// reparse point.
func openLockFile(p string) (*os.File, error) {
	return openRefusingReparse(p, os.O_RDWR|os.O_CREATE, 0o600)
}

// tryLock takes an exclusive lock on the first byte of f without waiting:
// false when another holds it.
func tryLock(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	default:
		return false, err
	}
}

// openNoFollow opens path to read it; a reparse point at path is refused
// with an error matching [errLinked].
func openNoFollow(path string) (*os.File, error) {
	return openRefusingReparse(path, os.O_RDONLY, 0)
}

// openRefusingReparse opens the file at path itself, never what a reparse
// point there names, and refuses it when it is one.
func openRefusingReparse(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|windows.O_FILE_FLAG_OPEN_REPARSE_POINT, perm)
	if err != nil {
		return nil, err
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		f.Close()
		return nil, errLinked
	}
	return f, nil
}

// idOf returns nothing: a Windows FileInfo does not carry the file's
// index; [openedID] reads it from an open handle.
func idOf(fs.FileInfo) fileID { return fileID{} }

// openedID is the (volume, file index) pair of the open file f.
func openedID(f *os.File, _ fs.FileInfo) fileID {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return fileID{}
	}
	return fileID{dev: uint64(info.VolumeSerialNumber), ino: filetimeTicks(info.FileIndexHigh, info.FileIndexLow)}
}

// unlink removes the name path itself: a file, or a link (a directory
// link or junction is removed as a directory entry, never its target).
func unlink(path string) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: path, Err: err}
	}
	err = windows.DeleteFile(p)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 && fi.IsDir() {
			err = windows.RemoveDirectory(p)
		}
	}
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: path, Err: err}
	}
	return nil
}

// replace renames tmp over path, retrying while Windows refuses for a
// moment (another process has the file open without sharing deletion).
func replace(tmp, path string) error {
	err := retryEphemeral(func() error { return os.Rename(tmp, path) }, renameRetryable, renameAttempts, time.Sleep)
	if err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// renameRetryable tells a refusal that passes from one that does not.
func renameRetryable(err error) bool {
	var code syscall.Errno
	return errors.As(err, &code) && windowsEphemeral(uintptr(code))
}
