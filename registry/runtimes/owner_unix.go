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
// other user's tree that is not for all to write in.
func anothersTree(path string) error {
	for at := path; ; at = filepath.Dir(at) {
		fi, err := os.Stat(at)
		if errors.Is(err, fs.ErrNotExist) && filepath.Dir(at) != at {
			continue
		}
		if err != nil {
			return nil // what cannot be told is the opening's to say
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() && fi.Mode().Perm()&0o002 == 0 &&
			(os.Geteuid() == 0 || unix.Access(at, unix.W_OK) != nil) {
			return fmt.Errorf("%w: %s belongs to another user (uid %d): the registry is not made or written there", ErrRegistryUnusable, at, st.Uid)
		}
		return nil
	}
}
