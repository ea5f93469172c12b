package rawio

import (
	"errors"
	"net"
	"unsafe"

	"golang.org/x/sys/windows"
)

// x/sys does not wrap WSAPoll, which asks a socket whether it is readable
// without waiting.
var procWSAPoll = windows.NewLazySystemDLL("ws2_32.dll").NewProc("WSAPoll")

// wsaPollFD is WSAPOLLFD.
type wsaPollFD struct {
	fd      windows.Handle
	events  int16
	revents int16
}

// WSAPoll's events (readable, reset, closed by the peer), and the ioctl
// that counts the bytes a socket holds unread.
const (
	pollRdNorm = 0x0100
	pollErr    = 0x0001
	pollHup    = 0x0002
	fionread   = 0x4004667f
)

// HungUp reports whether c's peer has closed its end and left nothing
// unread, or reset it: nothing written to c reaches anyone now. It asks
// the socket without waiting and takes nothing from it: WSAPoll says
// whether the peer closed or reset the connection, and FIONREAD whether
// anything is left to read. (A peek would wait where net/http's own read
// took what made the socket readable.) False when it cannot be told.
func HungUp(c net.Conn) bool {
	rc := rawConnOf(c)
	if rc == nil || procWSAPoll.Find() != nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		revents, err := pollRead(fd, 0)
		if err != nil || revents&pollErr != 0 || revents&pollHup == 0 {
			gone = err == nil && revents&pollErr != 0 // else nothing came, or it cannot say
			return
		}
		var unread, size uint32
		err = windows.WSAIoctl(windows.Handle(fd), fionread, nil, 0, (*byte)(unsafe.Pointer(&unread)), 4, &size, nil, 0)
		gone = err == nil && unread == 0
	})
	return gone
}

// pollRead waits up to timeout milliseconds (0: not at all) for the socket
// fd to be readable, closed or reset, and returns what WSAPoll says of it:
// 0 when nothing came.
func pollRead(fd uintptr, timeout int32) (revents int16, err error) {
	p := wsaPollFD{fd: windows.Handle(fd), events: pollRdNorm}
	n, _, callErr := procWSAPoll.Call(uintptr(unsafe.Pointer(&p)), 1, uintptr(timeout))
	if int32(n) < 0 {
		return 0, callErr
	}
	return p.revents, nil
}

// Refused reports whether err says that nothing listens where a
// connection was dialed: Windows refuses with WSAECONNREFUSED, which
// syscall.ECONNREFUSED (an errno Go makes up there) never matches.
func Refused(err error) bool { return errors.Is(err, windows.WSAECONNREFUSED) }
