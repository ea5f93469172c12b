package together

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// failovers stands in for the node's router: it serves the client from a
// bridge and, when the bridge reports a *Gone (from a message, or on Done
// while the client is idle), records it, opens the next backend (a Local
// session on f, or what mk makes) with the session carried, closes the
// bridge, and answers what the failure left unanswered.
type failovers struct {
	t     *testing.T
	f     *fixture
	err   error // the next backend cannot be had: the client is down
	calls chan failoverCall
	out   *wire.FrameWriter
	mk    func(ctx context.Context, carried carry.Session) (wire.Backend, error)

	mu      sync.Mutex // held while switching: messages wait for what serves next
	current wire.Backend
	down    error
}

type failoverCall struct {
	cause   error
	carried carry.Session
}

// bridge serves the client from a bridge to url.
func (fo *failovers) bridge(url string) func(*wire.FrameWriter) wire.Backend {
	return fo.with(bridge.Config{URL: url})
}

// with serves the client from a bridge configured by cfg.
func (fo *failovers) with(cfg bridge.Config) func(*wire.FrameWriter) wire.Backend {
	return func(out *wire.FrameWriter) wire.Backend {
		fo.out, cfg.Out, cfg.Secret = out, out, testSecret
		if cfg.ProbeTimeout == 0 {
			cfg.ProbeTimeout = testProbe
		}
		b, err := bridge.New(fo.t.Context(), cfg)
		if err != nil {
			fo.t.Fatal(err)
		}
		fo.serveFrom(b)
		return fo
	}
}

// serveFrom makes b serve (fo.mu held but for the first), watching a
// bridge for a failure while the client is idle.
func (fo *failovers) serveFrom(b wire.Backend) {
	fo.current = b
	if br, ok := b.(*bridge.Bridge); ok {
		go func() {
			<-br.Done()
			var g *bridge.Gone
			if errors.As(br.Err(), &g) {
				fo.lose(br, g)
			}
		}()
	}
}

func (fo *failovers) Handle(ctx context.Context, msg json.RawMessage) []byte {
	fo.mu.Lock()
	b, down := fo.current, fo.down
	fo.mu.Unlock()
	if down != nil {
		return wire.Unavailable(msg, down)
	}
	br, ok := b.(*bridge.Bridge)
	if !ok {
		return b.Handle(ctx, msg)
	}
	answer, err := br.Relay(ctx, msg)
	var g *bridge.Gone
	if !errors.As(err, &g) {
		return answer
	}
	fo.lose(br, g)
	return g.Resend(ctx, fo, msg)
}

// lose replaces b, once, after it reported g.
func (fo *failovers) lose(b *bridge.Bridge, g *bridge.Gone) {
	fo.mu.Lock()
	defer fo.mu.Unlock()
	if fo.current != b {
		return
	}
	fo.calls <- failoverCall{g.Cause, g.Session}
	b.Close()
	next, err := fo.open(g.Session)
	if err != nil {
		fo.current, fo.down = nil, fmt.Errorf("%v; %v", g.Cause, err)
		return
	}
	fo.serveFrom(next)
}

// open is the next backend, with the session carried onto it.
func (fo *failovers) open(carried carry.Session) (wire.Backend, error) {
	ctx := fo.t.Context()
	if fo.err != nil {
		return nil, fo.err
	}
	if fo.mk != nil {
		return fo.mk(ctx, carried)
	}
	local, err := stdio.NewLocal(ctx, fo.f.srv, fo.out, "stdio")
	if err != nil {
		return nil, err
	}
	if err := carried.Replay(ctx, local); err != nil {
		local.Close()
		return nil, err
	}
	return local, nil
}

func (fo *failovers) Close() {
	fo.mu.Lock()
	b := fo.current
	fo.mu.Unlock()
	if c, ok := b.(interface{ Close() }); ok {
		c.Close()
	}
}

func (fo *failovers) next() failoverCall {
	fo.t.Helper()
	select {
	case c := <-fo.calls:
		return c
	case <-time.After(wait):
		fo.t.Fatal("Failover was not called")
		return failoverCall{}
	}
}

func TestAKilledServerFailsOverWithTheSessionCarried(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.call("2", "tools/list", "")
	c.call("3", "tools/call", `{"name":"majordomus_announce","arguments":{"intent":"fix"}}`)
	<-f1.announces

	// a write (not idempotent) and a wait (read-only) are under way when the server dies
	c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"write","arguments":{"what":"x"}}}`,
		`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	<-f1.blocked
	s1.kill()

	call := fo.next()
	if !strings.Contains(call.cause.Error(), "unreachable") || string(call.carried.Announce) != `{"intent":"fix"}` ||
		call.carried.Protocol != "2025-11-25" || !strings.Contains(string(call.carried.Initialize), `"name":"bridged"`) {
		t.Fatalf("Failover(%v, %+v)", call.cause, call.carried)
	}
	a20, _ := c.answer("20")
	if !strings.Contains(a20, "outcome unknown") || !strings.Contains(a20, `"code":-32603`) {
		t.Fatalf("the write in flight was answered %s", a20)
	}
	if a21, _ := c.answer("21"); !strings.Contains(a21, "waited") {
		t.Fatalf("the read-only call in flight was answered %s (want it resent)", a21)
	}
	if got := <-f2.announces; got != `{"intent":"fix"}` {
		t.Fatalf("carried announcement %s", got)
	}
	// later messages go to the new backend; Failover is not called again
	if a := c.call("22", "tools/call", lookup("after")); !strings.Contains(a, "value of after") {
		t.Fatalf("after the failover: %s", a)
	}
	select {
	case call := <-fo.calls:
		t.Fatalf("Failover called twice: %v", call.cause)
	default:
	}
}

// An announcement in flight when the server dies is the one carried, not
// the one answered before it: the server may have kept it and shown it,
// and the board must not go back to the older one. One answered after the
// take-over replaces it.
func TestAnAnnouncementInFlightAtAKillIsTheOneCarried(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	t.Cleanup(f1.releaseAll)
	f1.hooks.AddBeforeCallTool(func(ctx context.Context, _ any, r *mcp.CallToolRequest) {
		if r.GetString("intent", "") == "step 2" { // kept, then never answered
			f1.blocked <- struct{}{}
			select {
			case <-f1.release:
			case <-ctx.Done():
			}
		}
	})
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.call("2", "tools/call", `{"name":"majordomus_announce","arguments":{"intent":"step 1"}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"step 2"}}}`)
	<-f1.blocked
	s1.kill()

	if call := fo.next(); string(call.carried.Announce) != `{"intent":"step 2"}` {
		t.Fatalf("carried %s, want the announcement in flight", call.carried.Announce)
	}
	if a, _ := c.answer("3"); !strings.Contains(a, "outcome unknown") {
		t.Fatalf("the announcement in flight was answered %s", a)
	}
	if got := <-f2.announces; got != `{"intent":"step 2"}` {
		t.Fatalf("the next server was given %s", got)
	}
	c.call("4", "tools/call", `{"name":"majordomus_announce","arguments":{"intent":"step 3"}}`)
	if got := <-f2.announces; got != `{"intent":"step 3"}` {
		t.Fatalf("announcing anew gave %s", got)
	}
}

func TestAMessageThatNeverReachedTheServerIsResent(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	s1.kill()
	// not read-only, but it provably never ran: the connection was refused
	c.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"late"}}}`)
	fo.next()
	if a, _ := c.answer("5"); !strings.Contains(a, "announced") {
		t.Fatalf("answered %s", a)
	}
	if got := <-f2.announces; got != `{"intent":"late"}` {
		t.Fatalf("f2 got %s", got)
	}
}

func TestAFailedFailoverAnswersUnavailableForGood(t *testing.T) {
	s1 := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	fo := &failovers{t: t, calls: make(chan failoverCall, 4), err: errors.New("cannot take over: x; cannot serve alone: y")}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	s1.kill()
	for i, id := range []string{"7", "8"} {
		a := c.call(id, "tools/list", "")
		if !strings.Contains(a, "shared server unavailable: ") || !strings.Contains(a, "cannot take over: x; cannot serve alone: y") ||
			!strings.Contains(a, "unreachable") || !strings.Contains(a, `"code":-32603`) {
			t.Fatalf("request %d answered %s", i, a)
		}
		// a notification owes nothing: the next frame answers the ping after it
		c.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	}
	fo.next()
	if a := c.call("9", "ping", ""); !strings.Contains(a, `"id":9,"error"`) {
		t.Fatalf("ping answered %s", a)
	}
	if len(fo.calls) != 0 {
		t.Fatal("Failover called more than once")
	}
}

func TestARefusalIsRelayedWithoutAnElection(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxBody: 4096})
	fo := &failovers{t: t, calls: make(chan failoverCall, 4), err: errors.New("nothing serves next: the bridge was to stay")}
	c := runStdio(t, fo.bridge(s.url))
	c.open(initRoots)
	a := c.call("2", "tools/call", lookup(strings.Repeat("x", 8192)))
	if !strings.Contains(a, "payload too large") || strings.Contains(a, "413") || strings.Contains(a, s.url) || !strings.Contains(a, `"id":2,"error"`) {
		t.Fatalf("answered %s", a)
	}
	if a := c.call("3", "tools/call", lookup("k")); !strings.Contains(a, "value of k") {
		t.Fatalf("after the refusal: %s", a)
	}
	if len(fo.calls) != 0 {
		t.Fatal("a refusal started an election")
	}
}

func TestALostLeaseMakesTheBridgeElect(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Refusal: func() *httpserver.Refusal {
		return &httpserver.Refusal{Message: "taken over", URL: "http://127.0.0.1:1"}
	}})
	f2 := newFixture()
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s.url))
	if a := c.open(initRoots); !strings.Contains(a, `"serverInfo":{"name":"fixture"`) || !strings.Contains(a, `"id":1,"result"`) {
		t.Fatalf("initialize answered %s", a)
	}
	call := fo.next()
	if !strings.Contains(call.cause.Error(), "lease_lost") || call.carried.Initialize != nil {
		t.Fatalf("Failover(%v, %+v)", call.cause, call.carried)
	}
	if n := s.Sessions(); n != 0 {
		t.Fatalf("the refusing server counts %d sessions", n)
	}
}

// A full server (503, Retry-After) is neither gone nor shutting down: the
// bridge fails over with a *FullServer cause saying how many sessions it
// has and how long it asked to be left alone, for the election to wait as
// asked (docs/design.md#sharing-heals); the initialize provably did not run
// there.
func TestAFullServerFailsOverSayingSo(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv, MaxSessions: 1})
	newClient(t, s1.url).initialize() // the one session it takes
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	if a := c.open(initRoots); !strings.Contains(a, `"id":1,"result"`) {
		t.Fatalf("initialize answered %s", a)
	}
	call := fo.next()
	var full *bridge.FullServer
	if !errors.As(call.cause, &full) || full.URL != s1.url || full.Sessions != 1 || full.RetryAfter != 5*time.Second {
		t.Fatalf("Failover(%v): want a *FullServer of 1 session, retry after 5s", call.cause)
	}
	if want := "the shared server at " + s1.url + " is full (1 session)"; call.cause.Error() != want || strings.Contains(call.cause.Error(), "shutting down") {
		t.Fatalf("the cause says %q, want %q", call.cause, want)
	}
	if n := s1.Sessions(); n != 1 {
		t.Fatalf("the full server counts %d sessions", n)
	}
}
