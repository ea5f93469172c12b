package transport

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// losing is a server whose lease can be lost while its sessions go on.
func losing(t *testing.T, f *fixture) (*served, *atomic.Bool) {
	lost := &atomic.Bool{}
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Refusal: func() *httpserver.Refusal {
		if lost.Load() {
			return &httpserver.Refusal{Message: "the lease was taken over"}
		}
		return nil
	}})
	return s, lost
}

// A bridge whose server lost its lease moves its session at its next
// message, before relaying it, and the old server's session ends.
func TestABridgeMovesOffAServerThatLostItsLease(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	s1, lost := losing(t, f1)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	s1.count.waitFor(t, 1)
	lost.Store(true)
	// The answer that says so is read; the message after it moves.
	if a := c.call("2", "tools/call", lookup("k")); !strings.Contains(a, "value of k") {
		t.Fatalf("answered %s", a)
	}
	if a := c.call("3", "tools/call", lookup("moved")); !strings.Contains(a, "value of moved") {
		t.Fatalf("after the move: %s", a)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "no longer holds the checkout's lease") || len(call.carried.Initialize) == 0 {
		t.Fatalf("Failover(%v, %+v)", call.cause, call.carried)
	}
	s1.count.waitFor(t, 0) // the old server drains
}

// An idle bridge moves when its heartbeat hears that the lease is lost.
func TestAnIdleBridgeMovesOnItsHeartbeat(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	s1, lost := losing(t, f1)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Heartbeat: 50 * time.Millisecond}))
	c.open(initRoots)
	s1.count.waitFor(t, 1)
	lost.Store(true)
	if call := fo.next(); !strings.Contains(call.cause.Error(), "no longer holds the checkout's lease") {
		t.Fatalf("Failover(%v)", call.cause)
	}
	s1.count.waitFor(t, 0)
}

// A call in flight is never moved: the bridge moves only once it ended.
func TestABridgeNeverMovesWithACallInFlight(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	s1, lost := losing(t, f1)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	lost.Store(true)
	// 6's answer says the lease is lost; 8 comes while 5 is still in flight.
	for _, id := range []string{"6", "8"} {
		if a := c.call(id, "tools/call", lookup("during")); !strings.Contains(a, "value of during") {
			t.Fatalf("call %s while another is in flight: %s", id, a)
		}
	}
	select {
	case call := <-fo.calls:
		t.Fatalf("moved with a call in flight: %v", call.cause)
	default:
	}
	f1.releaseAll()
	if a, _ := c.answer("5"); !strings.Contains(a, "waited") {
		t.Fatalf("the call in flight was answered %s", a)
	}
	if a := c.call("7", "tools/call", lookup("after")); !strings.Contains(a, "value of after") {
		t.Fatalf("after: %s", a)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "no longer holds") {
		t.Fatalf("Failover(%v)", call.cause)
	}
}
