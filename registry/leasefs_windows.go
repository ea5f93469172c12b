package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	return openRefusingReparse(p, windows.GENERIC_READ|windows.GENERIC_WRITE, windows.OPEN_ALWAYS)
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
// with an error matching [errLinked]. While a rename replaces the file,
// opening it fails for a moment: that is retried, so that a reader sees
// the old lease or the new one, never an error.
func openNoFollow(path string) (*os.File, error) {
	var f *os.File
	err := retryEphemeral(func() (err error) {
		f, err = openRefusingReparse(path, windows.GENERIC_READ, windows.OPEN_EXISTING)
		return err
	}, errnoIs(windowsBusy), renameAttempts, time.Sleep)
	return f, err
}

// errnoIs turns a judgement of Windows error codes into one of errors: a
// rename or open refused for a moment is retried, nothing else.
func errnoIs(judge func(code uintptr) bool) func(error) bool {
	return func(err error) bool {
		var code syscall.Errno
		return errors.As(err, &code) && judge(uintptr(code))
	}
}

// openRefusingReparse opens the file at path itself, never what a reparse
// point there names, and refuses it when it is one. It shares reading,
// writing and deletion, as Unix does: a reader of the lease must never
// keep a rename from replacing it (os.Open does not share deletion).
func openRefusingReparse(path string, access, disposition uint32) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	h, err := windows.CreateFile(name, access, share, nil, disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, errLinked
	}
	return os.NewFile(uintptr(h), path), nil
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
	return fileID{dev: uint64(info.VolumeSerialNumber), ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}
}

// directoryID is the (volume, file index) pair of the directory at path
// (a link or junction followed), read from a handle that shares reading,
// writing and deletion: os.Open does not share deletion, and would make a
// rename of the checkout fail while it is open.
func directoryID(path string) (fileID, bool) {
	h, err := openDirectory(path)
	if err != nil {
		return fileID{}, false
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil || info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		return fileID{}, false
	}
	return fileID{dev: uint64(info.VolumeSerialNumber), ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}, true
}

// openDirectory opens path, a directory or a file, to read its
// attributes only, sharing everything.
func openDirectory(path string) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return 0, err
	}
	const share = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	return windows.CreateFile(name, windows.FILE_READ_ATTRIBUTES, share, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
}

// unlink removes the name path itself: a file, or a link (a directory
// link or junction is removed as a directory entry, never its target;
// since Go 1.23 Lstat shows neither as a directory). While another process
// has the file open without sharing its deletion (an os.Open, a scanner),
// it is refused for a moment: that is retried, as a rename is.
func unlink(path string) error { return unlinkPausing(path, time.Sleep) }

func unlinkPausing(path string, sleep func(time.Duration)) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: path, Err: err}
	}
	err = retryEphemeral(func() error {
		err := windows.DeleteFile(p)
		if err != nil {
			// a directory link or junction; for anything else the error is
			// DeleteFile's
			if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 && windows.RemoveDirectory(p) == nil {
				return nil
			}
		}
		return err
	}, errnoIs(windowsBusy), renameAttempts, sleep)
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: path, Err: err}
	}
	return nil
}

// replace renames tmp (beside path) over path. It renames through an
// os.Root, which asks for POSIX semantics (Windows 10 1607 and later, on
// NTFS): the name is replaced even while a reader has the old file open.
// Elsewhere Windows refuses while a reader has it open: that is retried.
func replace(tmp, path string) error {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	defer root.Close()
	rename := func() error { return root.Rename(filepath.Base(tmp), filepath.Base(path)) }
	if err := retryEphemeral(rename, errnoIs(windowsEphemeral), renameAttempts, time.Sleep); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

// openAppend opens the state at path to append to it (every write goes to
// its end), refusing a reparse point.
func openAppend(path string) (*os.File, error) {
	return openRefusingReparse(path, windows.FILE_APPEND_DATA|windows.SYNCHRONIZE, windows.OPEN_EXISTING)
}

// notMine says why the opened file at path is not this user's alone
// (another owner, or others may write it), or "".
func notMine(f *os.File, _ fs.FileInfo, path string) string {
	return strings.Join(ownedPrivately(windows.Handle(f.Fd()), path, false), "; ")
}
