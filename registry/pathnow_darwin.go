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
	buf := new([unix.PathMax]byte)
	cerr := c.Control(func(fd uintptr) {
		// F_GETPATH fills a buffer of PathMax bytes; x/sys wraps no
		// fcntl that passes a buffer, and FcntlFstore passes its pointer
		// through unread.
		err = unix.FcntlFstore(fd, unix.F_GETPATH, (*unix.Fstore_t)(unsafe.Pointer(buf)))
	})
	if cerr != nil || err != nil {
		return "", false
	}
	path, _, _ := bytes.Cut(buf[:], []byte{0})
	return string(path), len(path) > 0
}
