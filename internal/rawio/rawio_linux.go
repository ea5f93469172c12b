package rawio

import (
	"errors"
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

// Own returns f, when it is a pipe or a socket (a host's stdio), through a
// descriptor of its own that Go's poller watches, read and written with
// raw system calls: waiting for it parks in the poller, not in a read(2)
// whose thread the runtime wakes and rebinds per message. f's open file
// description, which the process that made f may share, stays blocking.
// Anything else is returned as f. Closing what Own returns closes only its
// own descriptor.
func Own(f *os.File) io.ReadWriteCloser {
	st, err := f.Stat()
	if err != nil {
		return f
	}
	var own *os.File
	switch {
	case st.Mode()&os.ModeNamedPipe != 0:
		own = reopened(f)
	case st.Mode()&os.ModeSocket != 0:
		own = duplicated(f)
	}
	if own == nil {
		return f
	}
	r := wrap(own)
	if r == nil {
		own.Close()
		return f
	}
	r.socket = st.Mode()&os.ModeSocket != 0
	return owned{r, own}
}

// reopened is f, a pipe, opened again as a non-blocking description of
// its own, or nil.
func reopened(f *os.File) *os.File {
	var self string
	var flags int
	if control(f, func(fd uintptr) (err error) {
		self = "/proc/self/fd/" + strconv.Itoa(int(fd))
		flags, err = unix.FcntlInt(fd, unix.F_GETFL, 0)
		return err
	}) != nil {
		return nil
	}
	own, err := os.OpenFile(self, flags&unix.O_ACCMODE|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	return own
}

// duplicated is f, a socket, as a new descriptor the poller watches, or
// nil. A socket cannot be opened again: the description it shares with f
// is made non-blocking only while os registers it, then left as it was,
// and raw calls on a socket ask not to wait (MSG_DONTWAIT).
func duplicated(f *os.File) *os.File {
	var dup int
	if control(f, func(fd uintptr) (err error) {
		dup, err = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		return err
	}) != nil {
		return nil
	}
	flags, err := unix.FcntlInt(uintptr(dup), unix.F_GETFL, 0)
	if err == nil && flags&unix.O_NONBLOCK == 0 {
		err = unix.SetNonblock(dup, true)
	}
	if err != nil {
		unix.Close(dup)
		return nil
	}
	own := os.NewFile(uintptr(dup), f.Name()) // non-blocking now, so watched
	if flags&unix.O_NONBLOCK == 0 {
		_ = unix.SetNonblock(dup, false) // as it was
	}
	return own
}

// control runs do with f's descriptor (not f.Fd(), which would make f's
// description blocking).
func control(f *os.File, do func(fd uintptr) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var derr error
	if err := rc.Control(func(fd uintptr) { derr = do(fd) }); err != nil {
		return err
	}
	return derr
}

// owned is a pipe or socket's own descriptor, read and written raw.
type owned struct {
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

// SyscallConn is the connection's descriptor, as net's connections give it.
func (c *conn) SyscallConn() (syscall.RawConn, error) { return c.r.rc, nil }

// CloseWrite shuts down the writing side of a connection that can (TCP,
// Unix): an HTTP server half-closes a connection whose request it did not
// read whole before it drops it, so that its client reads the answer
// rather than a reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// raw reads and writes one descriptor through its RawConn: the RawConn
// keeps Go's locking, deadlines and closing, and waits in the poller when
// a call would block; the calls themselves are raw.
type raw struct {
	rc     syscall.RawConn
	socket bool // a socket that may be blocking: recv and send with MSG_DONTWAIT
}

// wrap returns c's descriptor as a raw, or nil.
func wrap(c any) *raw {
	if rc := rawConnOf(c); rc != nil {
		return &raw{rc: rc}
	}
	return nil
}

func (r *raw) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			v, e := r.call(unix.SYS_READ, unix.SYS_RECVFROM, fd, b, unix.MSG_DONTWAIT)
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
			v, e := r.call(unix.SYS_WRITE, unix.SYS_SENDTO, fd, b[n:], unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
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

// call makes the raw system call file on fd and b, or, on a socket,
// socket with flags.
func (r *raw) call(file, socket, fd uintptr, b []byte, flags int) (uintptr, syscall.Errno) {
	if r.socket {
		v, _, e := unix.RawSyscall6(socket, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(flags), 0, 0)
		return v, e
	}
	v, _, e := unix.RawSyscall(file, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	return v, e
}
