package together

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

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
	call := fo.next()
	if !strings.Contains(call.cause.Error(), "no longer holds the checkout's lease") || len(call.carried.Initialize) == 0 || call.carried.Left == "" || call.carried.LeftURL != s1.url {
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

// An idle bridge moves at once when a server that lost its lease ends its
// stream, its heartbeat far off.
func TestAnIdleBridgeMovesWhenItsServerEndsItsStream(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	s1, lost := losing(t, f1)
	streamOpen := make(chan struct{})
	var once sync.Once
	core, _ := observer.New(zapcore.DebugLevel)
	log := zap.New(core, zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == "stream open" {
			once.Do(func() { close(streamOpen) })
		}
		return nil
	}))
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Heartbeat: time.Hour, IdleTimeout: 2 * time.Hour, Logger: log}))
	c.open(initRoots)
	<-streamOpen
	lost.Store(true)
	s1.EndStreams()
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

// A call waiting for the server's tools to be listed is in flight too: an
// answer that says the lease is lost meanwhile does not move the bridge,
// whose next message still goes to the server the call will be sent to.
func TestABridgeNeverMovesWithACallWaitingForTheTools(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	listing, listed := make(chan struct{}), make(chan struct{})
	var held, release sync.Once
	f1.hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) {
		held.Do(func() { close(listing) })
		<-listed
	})
	s1, lost := losing(t, f1)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	t.Cleanup(func() { release.Do(func() { close(listed) }) }) // before the client's end
	// not yet initialized: the bridge lists the tools for the call of one
	c.send(initRoots)
	c.answer("1")
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":` + lookup("waiting") + `}`)
	<-listing
	lost.Store(true)
	// 3's answer says the lease is lost; 4 comes while 2 is in flight.
	for _, id := range []string{"3", "4"} {
		if a := c.call(id, "resources/read", `{"uri":"fixture://a"}`); !strings.Contains(a, "body of fixture://a") {
			t.Fatalf("read %s while a call waits for the tools: %s", id, a)
		}
	}
	select {
	case call := <-fo.calls:
		t.Fatalf("moved with a call waiting for the tools: %v", call.cause)
	default:
	}
	release.Do(func() { close(listed) })
	if a, _ := c.answer("2"); !strings.Contains(a, "value of waiting") {
		t.Fatalf("the waiting call was answered %s", a)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "no longer holds") {
		t.Fatalf("Failover(%v)", call.cause)
	}
}
