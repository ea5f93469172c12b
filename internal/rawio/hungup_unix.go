//go:build unix

package rawio

import (
	"errors"
	"net"

	"golang.org/x/sys/unix"
)

// HungUp reports whether c's peer has closed its end and left nothing
// unread, or reset it: nothing written to c reaches anyone now. It asks
// the socket without waiting and without taking anything from it (a
// peek), so a reader of c elsewhere loses nothing. False when it cannot
// be told.
func HungUp(c net.Conn) bool {
	rc := rawConnOf(c)
	if rc == nil {
		return false
	}
	gone := false
	_ = rc.Control(func(fd uintptr) {
		var b [1]byte
		for {
			n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			gone = (err == nil && n == 0) || errors.Is(err, unix.ECONNRESET)
			return
		}
	})
	return gone
}

// Refused reports whether err says that nothing listens where a
// connection was dialed.
func Refused(err error) bool { return errors.Is(err, unix.ECONNREFUSED) }
