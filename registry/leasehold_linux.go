package registry

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// On Linux a lease's owner holds it for its term with an open file
// description lock (F_OFD_SETLK) on one byte far past its end: the kernel
// releases it with the description, also when the owner dies; a lock past
// the end never stands in a reader's way, even where the file system makes
// locks mandatory (SMB); and a judge tests it without taking it
// (F_OFD_GETLK).

// termByte is the byte locked: past any lease a reader reads
// ([MaxLeaseSize]), within 32-bit offsets.
const termByte = 1 << 30

// holdFile locks the file at path, which nobody else has open yet, until
// the returned file is closed. (Opened for writing: only a writer may
// take a write lock.)
func holdFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart, Start: termByte, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return f, nil
}

// holderOf tells whether another open file holds f's term lock: alive when
// one does, gone when none does, unknown when the file system will not say.
func holderOf(f *os.File) proc.Liveness {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: io.SeekStart, Start: termByte, Len: 1}
	switch err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, &lk); {
	case err != nil:
		return proc.OwnerUnknown
	case lk.Type == unix.F_UNLCK:
		return proc.OwnerGone
	}
	return proc.OwnerAlive
}
