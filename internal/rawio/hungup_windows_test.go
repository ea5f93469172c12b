package rawio

import (
	"net"
	"syscall"
	"testing"
)

// readable waits until c has something to read, or its end, taking
// nothing.
func readable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var revents int16
	if cerr := rc.Control(func(fd uintptr) { revents, err = pollRead(fd, 10_000) }); cerr != nil || err != nil || revents == 0 {
		t.Fatalf("waiting to read: revents %#x, %v, %v", revents, cerr, err)
	}
}
