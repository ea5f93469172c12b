package together

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
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

// A bridge with a call in flight when its server ends its stream opens it
// again and holds it while the call runs, which may ask its client
// something there; the call answered, the bridge moves.
func TestABridgeWithACallInFlightHoldsItsStreamUntilTheCallEnds(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	t.Cleanup(f1.releaseAll)
	s1, lost := losing(t, f1)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	current := func() bool { return !lost.Load() } // as the lease file would say
	opened := make(chan struct{}, 4)
	core, _ := observer.New(zapcore.DebugLevel)
	log := zap.New(core, zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == "stream open" {
			opened <- struct{}{}
		}
		return nil
	}))
	c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Heartbeat: time.Hour, IdleTimeout: 2 * time.Hour, Current: current, Logger: log}))
	c.open(initRoots)
	<-opened
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rootsLater"}}`)
	<-f1.blocked
	lost.Store(true)
	s1.EndStreams()
	<-opened // again, on the server that lost its lease
	f1.releaseAll()
	req, _ := c.until(func(f string) bool { return strings.Contains(f, `"method":"roots/list"`) })
	var r struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"roots":[{"uri":"file:///checkout","name":"main"}]}}`)
	if a, _ := c.answer("5"); !strings.Contains(a, "1 roots") {
		t.Fatalf("the call in flight was answered %s", a)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "no longer holds the checkout's lease") {
		t.Fatalf("Failover(%v)", call.cause)
	}
}

// A server that lost its lease counts the 2026-07-28 calls it is still
// answering, which belong to no session, among what it drains; a bridge
// with such a call in flight holds its presence there again until the call
// is answered, and then moves.
func TestAModernCallInFlightKeepsALeaseLostServerServing(t *testing.T) {
	// The presence asks for prompts/list_changed: a server without prompts
	// ends it at once, and the count of 1 below would only flicker.
	f1, f2 := newFixture(server.WithPromptCapabilities(true)), newFixture()
	t.Cleanup(f1.releaseAll)
	lost := &atomic.Bool{}
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv, PresenceID: bridge.PresenceID, Refusal: func() *httpserver.Refusal {
		if lost.Load() {
			return &httpserver.Refusal{Message: "the lease was taken over"}
		}
		return nil
	}})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	current := func() bool { return !lost.Load() }
	c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Heartbeat: time.Hour, IdleTimeout: 2 * time.Hour, Current: current}))
	c.send(modernRequest(5, "tools/call", `{"name":"wait"}`))
	<-f1.blocked
	s1.count.waitFor(t, 1) // its presence
	lost.Store(true)
	s1.EndStreams()
	s1.count.waitFor(t, 2) // the call, and the presence held again
	f1.releaseAll()
	if a, _ := c.answer("5"); !strings.Contains(a, "waited") {
		t.Fatalf("the call in flight was answered %s", a)
	}
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

// A 2026-07-28 call that meets its server shutting down (503: it did not
// run) is failed over and answered by what serves next, as any revision's
// is: the 503's body is no JSON-RPC answer to hand the client.
func TestAModernCallMeetingAServerShuttingDownFailsOver(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	t.Cleanup(f1.releaseAll)
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	// Another client's call under way holds the shutdown open.
	other := runStdio(t, (&failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}).bridge(s1.url))
	other.open(initRoots)
	other.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	direct := newClient(t, s1.url)
	sid := direct.initialize()
	stopped := make(chan struct{})
	go func() { s1.stop(); close(stopped) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, _ := direct.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server never began to shut down")
		}
	}
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.send(modernRequest(6, "tools/list", ""))
	if a, _ := c.answer("6"); !strings.Contains(a, `"tools"`) {
		t.Fatalf("the call was answered %s", a)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "shutting down") {
		t.Fatalf("Failover(%v)", call.cause)
	}
	f1.releaseAll()
	<-stopped
}

// A bridge's call, of either revision, that its server answers once its
// lease was lost while the call ran (the server frozen as it ran it, and
// continued after a take-over) is not answered from there, whose record
// of it the checkout's history never shows: it runs again at the current
// server.
func TestACallAnsweredAfterTheLeaseWasLostRunsAtTheCurrentServer(t *testing.T) {
	for _, tc := range []struct {
		name string
		call string // the call, with id 5
		open bool   // the client initializes first
	}{
		{"legacy", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}}`, true},
		{"2026-07-28", modernRequest(5, "tools/call", `{"name":"wait"}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f1, f2 := newFixture(), newFixture()
			f2.releaseAll()
			t.Cleanup(f1.releaseAll)
			s1, lost := losing(t, f1)
			fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
			c := runStdio(t, func(out *wire.FrameWriter) wire.Backend { return naming{fo.bridge(s1.url)(out)} })
			if tc.open {
				c.open(initRoots)
			}
			c.send(tc.call)
			<-f1.blocked // it runs at the first server
			lost.Store(true)
			f1.releaseAll()
			a, _ := c.answer("5")
			select {
			case call := <-fo.calls:
				if !strings.Contains(call.cause.Error(), "the lease was taken over") || !strings.Contains(a, "waited") {
					t.Fatalf("Failover(%v); answered %s", call.cause, a)
				}
			default:
				t.Fatalf("answered %s by the server that lost its lease as the call ran", a)
			}
			<-f2.blocked // and ran again at the current one
		})
	}
}

// naming names the call each message makes, as the process serving a
// client does (carry.WithCall).
type naming struct{ wire.Backend }

func (n naming) Handle(ctx context.Context, msg json.RawMessage) []byte {
	return n.Backend.Handle(carry.WithCall(ctx, secret.NewChallenge()), msg)
}

// A bridge's call refused by a server that lost its lease, while another
// call of the bridge is still in flight there, waits for that call: the
// bridge moves once it ended, never with one in flight, and the refused
// call runs at the current server. The answers reach the client in either
// order: the bridge moves once its call there ended, as its answer is on
// its way to the client.
func TestACallRefusedAsTheLeaseWasLostWaitsForTheCallInFlight(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	var ended atomic.Bool // the call in flight ended at the server that lost its lease
	f1.hooks.AddAfterCallTool(func(_ context.Context, _ any, r *mcp.CallToolRequest, _ any) {
		if r.Params.Name == "wait" {
			ended.Store(true)
		}
	})
	early := make(chan bool, 1) // whether the refused call ran at the current server first
	f2.hooks.AddBeforeCallTool(func(_ context.Context, _ any, r *mcp.CallToolRequest) {
		if r.Params.Name == "lookup" {
			early <- !ended.Load()
		}
	})
	core, logs := observer.New(zapcore.InfoLevel)
	var lost atomic.Bool
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv, Logger: zap.New(core), Refusal: func() *httpserver.Refusal {
		if lost.Load() {
			return &httpserver.Refusal{Message: "the lease was taken over"}
		}
		return nil
	}})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, func(out *wire.FrameWriter) wire.Backend { return naming{fo.bridge(s1.url)(out)} })
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	lost.Store(true)
	c.send(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"during"}}}`)
	for deadline := time.Now().Add(wait); logs.FilterMessage("a bridge's call was refused").Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call was not refused")
		}
	}
	f1.releaseAll()
	if a5, _ := c.answer("5"); !strings.Contains(a5, "waited") {
		t.Fatalf("the call in flight was answered %s", a5)
	}
	if a6, _ := c.answer("6"); !strings.Contains(a6, "value of during") {
		t.Fatalf("the refused call was answered %s", a6)
	}
	if <-early {
		t.Fatal("the refused call ran at the current server while the call in flight still ran where the lease was lost")
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "lease") {
		t.Fatalf("Failover(%v)", call.cause)
	}
}
