package rawio

import (
	"net"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// readable waits until c has something to read, or its end, taking
// nothing.
func readable(t *testing.T, c net.Conn) {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n uintptr
	if cerr := rc.Control(func(fd uintptr) {
		p := wsaPollFD{fd: windows.Handle(fd), events: pollRdNorm}
		n, _, err = procWSAPoll.Call(uintptr(unsafe.Pointer(&p)), 1, 10_000)
	}); cerr != nil || int32(n) != 1 {
		t.Fatalf("waiting to read: %d ready, %v, %v", int32(n), cerr, err)
	}
}
