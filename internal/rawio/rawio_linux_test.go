package rawio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A pipe is read through a non-blocking description of its own, raw; the
// description it was given (the host's, which other processes may share)
// stays blocking. A file that is neither pipe nor socket is returned as it
// is.
func TestAPipeGetsADescriptionOfItsOwn(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "host's read end"), os.NewFile(uintptr(fds[1]), "host's write end")
	defer r.Close()
	defer w.Close()
	in := Own(r)
	defer in.Close()
	if _, ok := in.(owned); !ok {
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
	if got := Own(f); got != io.ReadWriteCloser(f) {
		t.Fatalf("a regular file was returned as %T", got)
	}
}

// A socket (the stdio a host built on Node gives its child) is read and
// written raw through a descriptor of its own, without ever waiting in a
// system call, while the description it was given stays blocking: both
// ways, a write larger than the socket holds, and its end.
func TestASocketIsReadAndWrittenRawAndStaysBlocking(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours, host := os.NewFile(uintptr(fds[0]), "our end"), os.NewFile(uintptr(fds[1]), "host's end")
	defer ours.Close()
	defer host.Close()
	rw := Own(ours)
	defer rw.Close()
	if o, ok := rw.(owned); !ok || !o.socket {
		t.Fatalf("a socket was returned as %T, not read raw", rw)
	}
	if flags, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK != 0 {
		t.Fatalf("the given description's flags are %#x (%v): it must stay blocking", flags, err)
	}
	sent := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB, more than a socket buffers
	done := make(chan error, 1)
	go func() {
		_, err := rw.Write(sent)
		done <- errors.Join(err, unix.Shutdown(fds[0], unix.SHUT_WR))
	}()
	got, err := io.ReadAll(host)
	if err != nil || !bytes.Equal(got, sent) {
		t.Fatalf("the host read %d bytes (%v), not the %d written", len(got), err, len(sent))
	}
	if err := <-done; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if _, err := host.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	host.Close()
	got, err = io.ReadAll(rw)
	if err != nil || string(got) != "hello" {
		t.Fatalf("read %q, %v; want the host's words and then its end", got, err)
	}
}

// A socket given non-blocking stays non-blocking: its description is left
// as it was found.
func TestANonBlockingSocketIsLeftAsItWas(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	ours := os.NewFile(uintptr(fds[0]), "our end")
	defer ours.Close()
	defer unix.Close(fds[1])
	rw := Own(ours)
	defer rw.Close()
	if flags, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0); err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Fatalf("the given description's flags are %#x (%v): it was non-blocking and must stay so", flags, err)
	}
}
