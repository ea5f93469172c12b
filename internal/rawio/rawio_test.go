package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A pipe read and written through Own carries every byte both ways, in
// order, and its end is io.EOF: a write larger than the pipe holds waits
// for the reader, and a read waits for the writer.
func TestAPipeCarriesEverythingAndEnds(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	in, out := Own(r), Own(w)
	defer in.Close()
	sent := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB: sixteen times a pipe's buffer
	done := make(chan error, 1)
	go func() {
		_, err := out.Write(sent)
		err = errors.Join(err, out.Close())
		if out != io.ReadWriteCloser(w) { // Own's own descriptor (Linux): the pipe ends when every writer left
			err = errors.Join(err, w.Close())
		}
		done <- err
	}()
	got, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("reading: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("writing: %v", err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(sent))
	}
}

// Writing to a pipe whose reader left fails (it does not kill the process,
// and does not block).
func TestWritingToAPipeWithoutReaderFails(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out := Own(w)
	defer out.Close()
	r.Close()
	if _, err := out.Write([]byte("x\n")); err == nil {
		t.Fatal("a write to a pipe nobody reads succeeded")
	}
}

// A connection keeps what net.Conn promises: it carries bytes both ways,
// it can be half-closed, a read deadline ends a waiting read with
// os.ErrDeadlineExceeded, closing the connection ends a waiting read, and
// the peer's close is io.EOF.
func TestAConnKeepsNetsPromises(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	dialed, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := Conn(dialed)
	defer c.Close()
	peer := <-accepted
	if peer == nil {
		t.Fatal("nothing accepted")
	}
	defer peer.Close()

	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("the peer read %q, %v", buf, err)
	}
	if _, err := peer.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("read %q, %v", buf, err)
	}

	// Half-closing it, as an HTTP server does before it drops a connection
	// whose request it did not read whole, ends what the peer reads, and
	// nothing of what the peer writes.
	half, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("the connection cannot be half-closed")
	}
	if err := half.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if n, err := peer.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after a half-close, the peer read %d, %v; want io.EOF", n, err)
	}
	if _, err := peer.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "more" {
		t.Fatalf("after a half-close, read %q, %v", buf, err)
	}

	if err := c.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read past its deadline returned %v", err)
	}
	if err := c.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}

	peer.Close()
	if n, err := c.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("after the peer closed, a read returned %d, %v; want io.EOF", n, err)
	}

	waiting, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	w := Conn(waiting)
	ended := make(chan error, 1)
	go func() {
		_, err := w.Read(buf)
		ended <- err
	}()
	w.Close()
	if err := <-ended; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("closing a connection ended its waiting read with %v", err)
	}
	if p := <-acceptedAgain(ln); p != nil {
		p.Close()
	}
}

// acceptedAgain accepts the listener's next connection.
func acceptedAgain(ln net.Listener) <-chan net.Conn {
	c := make(chan net.Conn, 1)
	go func() {
		conn, _ := ln.Accept()
		c <- conn
	}()
	return c
}

// A file's stamp stays the same until the file is written, replaced or
// removed; a symbolic link is stamped itself.
func TestAStampChangesWithTheFile(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "lease.json")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stamp := func(p string) Stamp {
		t.Helper()
		s, err := Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	write(path, "one")
	first := stamp(path)
	if !first.Same(stamp(path)) {
		t.Fatal("two stamps of an unchanged file differ")
	}
	write(path, "one, longer")
	if first.Same(stamp(path)) {
		t.Fatal("a file written to a new size kept its stamp")
	}
	written := stamp(path)
	// another file of the same size and time: only which file it is
	// differs (Windows reads that lazily, by path, unless stamped at once)
	other := filepath.Join(dir, "next.json")
	write(other, "one, longer")
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	if written.Same(stamp(path)) {
		t.Fatal("a file replaced by another of the same size and time kept its stamp")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stamping a removed file returned %v", err)
	}
}
