package registry

import (
	"os"
	"strconv"
)

// pathNow is where the open file f is now, its directory having perhaps
// been moved since it was opened: the kernel's name for it.
func pathNow(f *os.File) (string, bool) {
	c, err := f.SyscallConn()
	if err != nil {
		return "", false
	}
	var p string
	cerr := c.Control(func(fd uintptr) {
		p, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10))
	})
	return p, cerr == nil && err == nil
}
