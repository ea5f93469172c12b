//go:build unix

package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Trusted says why the lease at leasePath must not be used, or nil (SPEC
// §13): its directory, when it exists, is a directory of this process's
// user that nobody else may write (no symbolic link, no group or other
// write bit), and a lease file in it, when there is one, is this user's.
// A lease another user could write or wrote is never judged, taken over or
// attached to: the client is served alone with the reason.
func Trusted(leasePath string) error {
	dir := filepath.Dir(leasePath)
	me := os.Geteuid()
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil // this process creates it, 0700
	case err != nil:
		return nil // unreadable: the election says why, with its own words
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("the lease directory %s is a symbolic link, which is never followed", dir)
	case !fi.IsDir():
		return nil // not a directory: the election reports it
	}
	if uid := ownerOf(fi); uid != me {
		return fmt.Errorf("the lease directory %s belongs to another user (uid %d; this process runs as uid %d)", dir, uid, me)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the lease directory %s is writable by other users (mode %v)", dir, fi.Mode().Perm())
	}
	if fi, err := os.Lstat(leasePath); err == nil && fi.Mode().IsRegular() {
		if uid := ownerOf(fi); uid != me {
			return fmt.Errorf("the lease %s was written by another user (uid %d; this process runs as uid %d)", leasePath, uid, me)
		}
	}
	return nil
}

// ownerOf is a file's owner, or -1 when the system does not say.
func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
