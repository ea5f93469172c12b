package rawio

import (
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A pipe is read through a non-blocking description of its own, raw; the
// description it was given (the host's, which other processes may share)
// stays blocking. A file that is no pipe is returned as it is.
func TestAPipeGetsADescriptionOfItsOwn(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "host's read end"), os.NewFile(uintptr(fds[1]), "host's write end")
	defer r.Close()
	defer w.Close()
	in := Pipe(r)
	defer in.Close()
	if _, ok := in.(pipe); !ok {
		t.Fatalf("a pipe was returned as %T, not read raw", in)
	}
	if flags, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("the given description's flags are %#x (%v): it must stay blocking", flags, err)
	}
	if _, err := w.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(in, buf); err != nil || string(buf) != "hello" {
		t.Fatalf("read %q, %v", buf, err)
	}

	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := Pipe(f); got != io.ReadWriteCloser(f) {
		t.Fatalf("a regular file was returned as %T", got)
	}
}
