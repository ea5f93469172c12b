//go:build unix

package layer

import (
	"errors"
	"os"
	"syscall"
)

// openToRead opens path to read it. A named pipe put where a file was
// never blocks the open (O_NONBLOCK), which would hold the index, and with
// it a start, until a writer came; the caller refuses what is not regular.
func openToRead(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// linkLoop reports whether err says that a path could not be followed
// for a loop of links.
func linkLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }
