//go:build unix

package rawio

import (
	"net"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// readable waits until c has something to read, or its end, taking
// nothing.
func readable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if cerr := rc.Control(func(fd uintptr) {
		for {
			n, err = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 10_000)
			if err != unix.EINTR {
				return
			}
		}
	}); cerr != nil || err != nil || n != 1 {
		t.Fatalf("waiting to read: %d ready, %v, %v", n, cerr, err)
	}
}
