package rawio

import (
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn returns c reading and writing with raw system calls, or c itself
// where that is not possible.
func Conn(c net.Conn) net.Conn {
	if r := wrap(c); r != nil {
		return &conn{Conn: c, r: r}
	}
	return c
}

// Pipe returns f, when it is a pipe, opened again as a non-blocking open
// file description of its own (f's, which the process that made the pipe
// may share, stays blocking), read and written with raw system calls:
// waiting for it parks in Go's poller, not in a read(2) whose thread the
// runtime wakes and rebinds per message. Anything else is returned as f.
// Closing what it returns closes only that description.
func Pipe(f *os.File) io.ReadWriteCloser {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return f
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	var self string
	var flags int
	var ferr error
	err = rc.Control(func(fd uintptr) { // not f.Fd(), which would make f's description blocking
		self = "/proc/self/fd/" + strconv.Itoa(int(fd))
		flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0)
	})
	if err != nil || ferr != nil {
		return f
	}
	own, err := os.OpenFile(self, flags&unix.O_ACCMODE|unix.O_NONBLOCK, 0)
	if err != nil {
		return f
	}
	if r := wrap(own); r != nil {
		return pipe{r, own}
	}
	return own
}

// pipe is a pipe's own description, read and written raw.
type pipe struct {
	*raw
	io.Closer
}

// conn is a net.Conn whose reads and writes are raw.
type conn struct {
	net.Conn
	r *raw
}

func (c *conn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *conn) Write(b []byte) (int, error) { return c.r.Write(b) }

// raw reads and writes one descriptor through its RawConn: the RawConn
// keeps Go's locking, deadlines and closing, and waits in the poller when
// a call would block; the calls themselves are raw.
type raw struct{ rc syscall.RawConn }

// wrap returns c's descriptor as a raw, or nil.
func wrap(c any) *raw {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return &raw{rc}
}

func (r *raw) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			v, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // the poller waits
			}
			n, errno = int(v), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *raw) Write(b []byte) (int, error) {
	n := 0
	var errno syscall.Errno
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			v, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[n])), uintptr(len(b)-n))
			switch e {
			case 0:
				n += int(v)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the poller waits
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}
