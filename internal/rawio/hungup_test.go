//go:build unix || windows

package rawio

import (
	"io"
	"net"
	"testing"
)

// HungUp tells a peer that closed its end from one that did not, or that
// left something unread, and takes nothing from the connection, raw or
// not.
func TestHungUpTellsAPeerThatClosedItsEnd(t *testing.T) {
	for _, wrap := range []struct {
		name string
		conn func(net.Conn) net.Conn
	}{{"net", func(c net.Conn) net.Conn { return c }}, {"raw", Conn}} {
		t.Run(wrap.name, func(t *testing.T) {
			ours, peer := tcpPair(t)
			c := wrap.conn(ours)
			if HungUp(c) {
				t.Fatal("HungUp while the peer is connected and silent")
			}
			if _, err := peer.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			peer.Close()
			readable(t, ours) // the byte has come
			if HungUp(c) {
				t.Fatal("HungUp with a byte unread")
			}
			b := make([]byte, 2)
			if n, err := c.Read(b); n != 1 || b[0] != 'x' {
				t.Fatalf("the byte HungUp looked at was taken: read %d %q, %v", n, b[:n], err)
			}
			readable(t, ours) // the end has come
			if !HungUp(c) {
				t.Fatal("HungUp is false for a peer that closed its end, everything read")
			}
			if _, err := c.Read(b); err != io.EOF {
				t.Fatalf("after HungUp, a read gave %v, want io.EOF", err)
			}
		})
	}
}

// tcpPair is a connected loopback TCP pair, closed when t ends.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ours, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ours.Close(); peer.Close() })
	return ours, peer
}
