package together

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// restartedWith restarts a server on the port of s with f.
func restartedWith(t *testing.T, s *served, f *fixture) *served {
	t.Helper()
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	s.stop()
	ln, err := httpserver.Listen("127.0.0.1", port, nil)
	if err != nil || ln.Addr().(*net.TCPAddr).Port != port {
		t.Fatalf("cannot bind the same port again: %v", err)
	}
	return serveOn(t, ln, httpserver.Config{MCP: f.srv})
}

// A session the bridge opens again brings its announcement with its
// initialize (announceHeaderName): a server that says it took it is sent no
// announcement call; one that does not say so is sent the announcement
// marked as a replay. Either way the bridge goes on carrying it.
func TestAReopenedSessionBringsItsAnnouncementWithIt(t *testing.T) {
	f1 := newFixture()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	c := runStdio(t, bridgeTo(t, s1.url, nil))
	c.open(initRoots)
	c.call("2", "tools/call", `{"name":"majordomus_announce","arguments":{"intent":"refactor","scope":["a/"]}}`)
	if got, replay := <-f1.announces, <-f1.replays; got != `{"intent":"refactor","scope":["a/"]}` || replay {
		t.Fatalf("announced %s (replay %v)", got, replay)
	}

	// a server that takes the announcement with the session
	f2 := newFixture()
	carried := make(chan string, 4)
	f2.hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if args := carry.Announcement(ctx); args != nil {
			carried <- string(args)
			res.Meta = &mcp.Meta{AdditionalFields: map[string]any{"io.majordomus/announced": true}}
		}
	})
	s2 := restartedWith(t, s1, f2)
	c.call("3", "tools/list", "")
	select {
	case got := <-carried:
		if got != `{"intent":"refactor","scope":["a/"]}` {
			t.Fatalf("the session was opened with %s", got)
		}
	case <-time.After(wait):
		t.Fatal("the session was opened without its announcement")
	}
	select {
	case got := <-f2.announces:
		t.Fatalf("a server that took the announcement was sent it again: %s", got)
	default:
	}

	// and one that does not: the announcement, carried still, is a replay
	f3 := newFixture()
	restartedWith(t, s2, f3)
	c.call("4", "tools/list", "")
	select {
	case got := <-f3.announces:
		if replay := <-f3.replays; got != `{"intent":"refactor","scope":["a/"]}` || !replay {
			t.Fatalf("replayed %s, marked %v", got, replay)
		}
	case <-time.After(wait):
		t.Fatal("the announcement was not replayed to a server that did not take it")
	}
}

// A session carried back onto the server its bridge left ends the session
// left there before its initialize claims the client's peer id: that
// session's peer holds the id until it ends, and the server's board would
// give the client a new one.
func TestASessionCarriedBackEndsTheOneItLeftThereFirst(t *testing.T) {
	f := newFixture()
	var left atomic.Value // the session a bridge left, not yet ended
	stillThere := make(chan bool, 1)
	f.hooks.AddBeforeInitialize(func(context.Context, any, *mcp.InitializeRequest) { // hooks are set before serving
		if sid, ok := left.Load().(string); ok {
			stillThere <- f.session(sid) != nil
		}
	})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	sid := newClient(t, s.url).initialize()
	left.Store(sid)
	carried := carry.Session{Initialize: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`),
		Protocol: "2025-11-25", Peer: "p1", Left: sid, LeftURL: s.url}
	b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard), Carried: carried})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if err := carried.Replay(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if <-stillThere {
		t.Fatal("the session was opened again while the one it left there was still open")
	}
	if f.registered() != 1 {
		t.Fatalf("%d sessions registered, want the one carried back", f.registered())
	}
}
