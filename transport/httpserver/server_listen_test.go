package httpserver

import (
	"net"
	"net/http"
	"testing"
)

// At the cap, the oldest connection no request of which proved the
// secret makes room, one serving no request first; a request on it then
// runs nowhere (prove says it is no longer counted), and where every
// place is proven a newcomer is refused.
func TestTheConnectionThatMakesRoom(t *testing.T) {
	var c connCount
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	busy, idle, next := pipe(), pipe(), pipe()
	for _, conn := range []net.Conn{busy, idle} {
		if !c.admit(conn, 2) {
			t.Fatal("a connection within the cap was refused")
		}
	}
	c.track(busy, http.StateActive) // its request is being read: its token not yet
	if !c.admit(next, 2) {
		t.Fatal("a newcomer was refused while unproven connections were open")
	}
	if c.prove(idle) {
		t.Error("the idle connection closed to make room still counts")
	}
	if !c.prove(busy) || !c.prove(next) {
		t.Error("the connection serving a request, or the newcomer, was closed to make room")
	}
	if c.admit(pipe(), 2) {
		t.Error("a newcomer was admitted beyond a cap of proven connections")
	}
	c.track(busy, http.StateClosed)
	if !c.admit(pipe(), 2) || len(c.open) != 2 || c.unproven.Len() != 1 {
		t.Errorf("after one closed: %d open, %d unproven", len(c.open), c.unproven.Len())
	}
}
