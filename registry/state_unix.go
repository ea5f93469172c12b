//go:build unix

package registry

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

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
// user's, or "".
func notMine(_ *os.File, fi fs.FileInfo, path string) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if me := os.Geteuid(); ok && int(st.Uid) != me {
		return fmt.Sprintf("%s belongs to another user (uid %d; this process runs as uid %d)", path, st.Uid, me)
	}
	return ""
}
