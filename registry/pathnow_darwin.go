package registry

import (
	"bytes"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pathNow is where the open file f is now, its directory having perhaps
// been moved since it was opened: fcntl's F_GETPATH.
func pathNow(f *os.File) (string, bool) {
	c, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	// F_GETPATH fills a buffer of PathMax bytes. x/sys wraps no fcntl
	// that passes a buffer; FcntlFstore hands its pointer to the call
	// unread, so the buffer is aligned as an Fstore_t would be.
	buf := new(struct {
		_    [0]uint64
		path [unix.PathMax]byte
	})
	cerr := c.Control(func(fd uintptr) {
		err = unix.FcntlFstore(fd, unix.F_GETPATH, (*unix.Fstore_t)(unsafe.Pointer(buf)))
	})
	if cerr != nil || err != nil {
		return "", false
	}
	path, _, _ := bytes.Cut(buf.path[:], []byte{0})
	return string(path), len(path) > 0
}
