//go:build unix

package runtimes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// anothersTree refuses path, the registry, when what is there, or the
// nearest directory above it that is, belongs to another user, and is
// neither for anyone to write in (as /tmp is) nor this user's to write by
// its group: root with another user's HOME (sudo keeps it) would make the
// registry, or the directories to it, its own in that user's tree, and
// lock the user out of them. Root may write anywhere: it is refused any
// other user's tree that is not for all to write in. A registry file that
// is there must be this user's, whatever its mode, and so must its -wal,
// -shm and -journal (othersOwn, anothersCompanions).
func anothersTree(path string) error {
	if err := anothersCompanions(path); err != nil {
		return err
	}
	for at := path; ; at = filepath.Dir(at) {
		fi, err := os.Stat(at)
		if errors.Is(err, fs.ErrNotExist) && filepath.Dir(at) != at {
			continue
		}
		if err != nil {
			return nil // what cannot be told is the opening's to say
		}
		if at == path {
			return othersOwn(path, fi) // its companions are checked above, there or not
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && fi.Mode().Perm()&0o002 == 0 &&
			(os.Geteuid() == 0 || unix.Access(at, unix.W_OK) != nil) {
			return fmt.Errorf("%w: %s belongs to another user (uid %d): the registry is not made or written there", ErrRegistryUnusable, at, st.Uid)
		}
		return nil
	}
}

// anothersFile refuses a registry file fi, at path, that another user
// owns, even one all may write (made in a shared directory such as /tmp
// before this user's first server): its owner reads every row written
// into it and may rewrite any, so as to decide what an inventory says —
// a live server of this checkout recorded as another checkout's is
// counted nowhere.
func anothersFile(path string, fi fs.FileInfo) error {
	if err := othersOwn(path, fi); err != nil {
		return err
	}
	return anothersCompanions(path)
}

// othersOwn refuses fi, the registry file at path, when another user owns it.
func othersOwn(path string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%w: %s belongs to another user (uid %d): the registry is not read or written there", ErrRegistryUnusable, path, st.Uid)
	}
	return nil
}

// anothersCompanions refuses the registry at path when its -wal, -shm or
// -journal, which SQLite opens where it finds them (beside the file a link
// at path leads to), is a link, not a regular file, or another user's:
// made beforehand in a directory anyone writes in, it would hold every row
// written, and what a reader reads first, in that user's file (a hot
// journal is rolled back into the registry before anything is read), or
// hold every reader in its open for good (a named pipe).
func anothersCompanions(path string) error {
	for _, db := range withTarget(path) {
		for _, p := range []string{db + "-wal", db + "-shm", db + "-journal"} {
			fi, err := os.Lstat(p)
			if err != nil {
				continue // none there, or what cannot be told is the opening's to say
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("%w: %s is a %s: the registry is not read or written beside it", ErrRegistryUnusable, p, kindOf(fi.Mode()))
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
				return fmt.Errorf("%w: %s belongs to another user (uid %d): the registry is not read or written beside it", ErrRegistryUnusable, p, st.Uid)
			}
		}
	}
	return nil
}
