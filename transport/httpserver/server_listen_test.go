package httpserver

import (
	"math"
	"net"
	"net/http"
	"testing"
)

// At the cap, the oldest connection no request of which proved the
// secret makes room, an idle one first; a request on it then runs nowhere
// (prove says it is no longer counted), and where every place is proven
// a newcomer is refused.
func TestTheConnectionThatMakesRoom(t *testing.T) {
	var c connCount
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	busy, idle, fresh := pipe(), pipe(), pipe()
	for _, conn := range []net.Conn{busy, idle, fresh} {
		if !c.admit(conn, 3) {
			t.Fatal("a connection within the cap was refused")
		}
	}
	c.track(busy, http.StateActive) // a request being served: a tokenless one, or one whose token is being checked
	c.track(idle, http.StateActive)
	c.track(idle, http.StateIdle) // served without the token
	if !c.admit(pipe(), 3) || c.prove(idle) {
		t.Fatal("a newcomer did not take the idle unproven connection's place")
	}
	next := pipe()
	if !c.admit(next, 3) || c.prove(busy) {
		t.Fatal("with none idle, the oldest unproven connection did not make room")
	}
	if !c.prove(fresh) || !c.prove(next) {
		t.Fatal("a newer connection was closed to make room")
	}
	last := pipe()
	if !c.admit(last, 3) || !c.prove(last) {
		t.Fatal("the last unproven connection did not make room")
	}
	if c.admit(pipe(), 3) {
		t.Error("a newcomer was admitted beyond a cap of proven connections")
	}
	c.track(fresh, http.StateClosed)
	if !c.admit(pipe(), 3) || len(c.open) != 3 || c.unproven.Len() != 1 {
		t.Errorf("after one closed: %d open, %d unproven", len(c.open), c.unproven.Len())
	}
}

// Where every place is proven, the connection idle the longest makes room
// (a client's keep-alive one, which it dials again), so that connections
// of the owner's that pile up never turn a new client's probe away; one
// serving a request or holding a stream never does, nor one a client is
// coming on until it has arrived. With none of them idle, a newcomer is
// refused.
func TestTheProvenConnectionIdleTheLongestMakesRoom(t *testing.T) {
	var c connCount
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	served := func(conn net.Conn) { // a request with the token, then idle
		c.track(conn, http.StateActive)
		c.prove(conn)
		c.track(conn, http.StateIdle)
	}
	coming, longest, latest, streaming := pipe(), pipe(), pipe(), pipe()
	for _, conn := range []net.Conn{coming, longest, latest, streaming} {
		if !c.admit(conn, 4) {
			t.Fatal("a connection within the cap was refused")
		}
	}
	c.track(coming, http.StateActive) // a probe asking for the seal: its client's next request attaches
	c.prove(coming)
	c.coming(coming, func() func() { return func() {} })
	c.track(coming, http.StateIdle)
	served(longest)
	served(latest)
	c.track(streaming, http.StateActive) // a listen stream, held open
	c.prove(streaming)
	inFlight := func() net.Conn {
		conn := pipe()
		if !c.admit(conn, 4) {
			return nil
		}
		c.track(conn, http.StateActive)
		c.prove(conn)
		return conn
	}
	if inFlight() == nil || c.prove(longest) {
		t.Fatal("the proven connection idle the longest did not make room")
	}
	if inFlight() == nil || c.prove(latest) {
		t.Fatal("the last idle proven connection did not make room")
	}
	if !c.prove(coming) || !c.prove(streaming) {
		t.Fatal("a connection serving a stream, or one a client is coming on, made room")
	}
	if inFlight() != nil {
		t.Fatal("a newcomer was admitted where no proven connection is idle")
	}
	c.track(coming, http.StateActive) // its client arrived: the connection is its keep-alive one now
	c.track(coming, http.StateIdle)
	if inFlight() == nil || c.prove(coming) {
		t.Fatal("the connection a client arrived on, idle since, did not make room")
	}
	if len(c.open) != 4 {
		t.Errorf("%d open within a cap of 4", len(c.open))
	}
}

// A cap of sessions raised past the default raises the cap of
// connections with it: each session may hold two, and a newcomer past the
// connections' cap is dropped at accept, where the sessions' cap answers
// 503 with Retry-After. It never passes half the files the process may
// open.
func TestTheConnectionsCapFollowsTheSessionsCap(t *testing.T) {
	for _, tc := range []struct{ sessions, connections, want int }{
		{0, 0, 4 * DefaultMaxSessions},
		{2000, 0, 8000},
		{2000, 100, 100},
		{1, 0, 4 * DefaultMaxSessions},        // a bridge's presence takes no place: a lowered cap lowers no cap of connections
		{math.MaxInt, 0, math.MaxInt / 4 * 4}, // never past what an int holds: a cap of 0 or less admits nobody
		{1 << 62, 0, math.MaxInt / 4 * 4},
	} {
		h := New(Config{MaxSessions: tc.sessions, MaxConnections: tc.connections})
		got := h.cfg.MaxConnections
		h.Shutdown(t.Context())
		if tc.connections == 0 {
			tc.want = min(tc.want, openFilesLimit()/2)
		}
		if got != tc.want {
			t.Fatalf("sessions %d, connections %d: a cap of %d connections, want %d", tc.sessions, tc.connections, got, tc.want)
		}
	}
}

// A client that asks without the seal (status: the proof, then its token
// on the same connection) leaves its connection idle and unproven between
// the two. Admitted in the place of a proven one, that connection is not
// closed for the next newcomer while a proven one sits idle: its token
// request is on its way, and status would fail at a cap of the owner's
// idle connections.
func TestANewcomerBetweenItsProofAndItsTokenOutlivesTheIdleConnections(t *testing.T) {
	var c connCount
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	owner := []net.Conn{pipe(), pipe(), pipe()}
	for _, conn := range owner {
		if !c.admit(conn, 3) {
			t.Fatal("a connection within the cap was refused")
		}
		c.track(conn, http.StateActive)
		c.prove(conn)
		c.track(conn, http.StateIdle)
	}
	status := pipe()
	if !c.admit(status, 3) {
		t.Fatal("a newcomer at a cap of idle proven connections was refused")
	}
	c.track(status, http.StateActive) // its probe, asking no seal
	c.track(status, http.StateIdle)
	if !c.admit(pipe(), 3) {
		t.Fatal("a second newcomer was refused while a proven connection sat idle")
	}
	c.track(status, http.StateActive) // its token
	if !c.prove(status) {
		t.Fatal("a newcomer between its proof and its token was closed to make room while the owner's connections sat idle")
	}
}
