//go:build unix

package logging

import (
	"os"
	"syscall"
)

// logOpenFlags open a log file without waiting: a FIFO with no reader
// is refused at once (ENXIO) instead of holding the open until one comes;
// nor do they follow a link at the path (ELOOP), which another user may
// have made where the log file is to be.
const logOpenFlags = syscall.O_NONBLOCK | syscall.O_NOFOLLOW

// ownFile reports whether the opened file belongs to this user.
func ownFile(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// hardLinked reports whether the opened file has other names: another
// user may link a file of this user's where the log file is to be (where
// anyone may link a file they do not own: macOS, the BSDs).
func hardLinked(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
