package node

import (
	"cmp"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// The first node wins the lease and serves its client in process; the
// second finds the lease live and bridges its client to the first's
// server: both are on one board.
func TestTheFirstNodeServesAndTheNextAttaches(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	a.client.initialize()

	c := start(t, "c", co.fresh(), b, true)
	c.client.initialize()
	c.awaitState(machine.Attached)
	peers := c.client.tool("majordomus_peers", map[string]any{}, nil)
	if !strings.Contains(peers, `"a"`) || !strings.Contains(peers, `"c"`) {
		t.Fatalf("the attached client sees the peers %s; want a and c on one board", peers)
	}
	if d := c.node.describe(); d.Role != string(machine.Attached) || d.URL != b.url || d.Leaseholder {
		t.Errorf("the attached node describes itself as %+v", d)
	}
	if d := a.node.describe(); d.Role != string(machine.Leaseholder) || !d.Leaseholder {
		t.Errorf("the leaseholder describes itself as %+v", d)
	}
}

// The leaseholder ends; the attached node's next message makes it elect,
// win, and serve its client itself, with the session carried: the client
// does not initialize again, is told, and is still on the board under its
// name.
func TestATakeOverCarriesTheSession(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	d := start(t, "d", co.fresh(), b, true) // another peer, which must not take c's id
	d.client.initialize()
	d.awaitState(machine.Attached)
	t.Cleanup(d.lease.pause()) // d re-attaches only after the test: c takes over
	c := start(t, "c", co.fresh(), b, true)
	id := c.client.initialize()
	c.awaitState(machine.Attached)
	c.client.tool("majordomus_announce", map[string]any{"intent": "renaming the parser"}, nil)

	a.node.Signal("SIGTERM")
	a.wait()
	if b.holding() == "a" {
		t.Fatal("the ended leaseholder kept the lease")
	}
	var notes []map[string]any
	peers := c.client.tool("majordomus_peers", map[string]any{}, &notes)
	c.awaitLog("took over as the shared server")
	if c.node.State() != machine.Leaseholder || b.holding() != "c" {
		t.Fatalf("after the take-over the node is %s and the lease is %q's", c.node.State(), b.holding())
	}
	if !strings.Contains(peers, "renaming the parser") {
		t.Errorf("the carried session lost its announcement: %s", peers)
	}
	c.client.awaitNote(notes, "took over as the checkout's shared server")
	if id == "" || c.client.caller() != id {
		t.Errorf("the client was given %q, and is %q after the take-over", id, c.client.caller())
	}
}

// The leaseholder ends and another node wins the lease before the attached
// node's next message: that node re-attaches, to the new server, with its
// session replayed there.
func TestAReattachCarriesTheSessionToTheNewServer(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a, c, id := servingAndAttached(t, co, b)
	c.client.tool("majordomus_announce", map[string]any{"intent": "writing the tests"}, nil)

	var early atomic.Bool // the log said so before the bridge served the client
	c.logs.hook("re-attached to the shared server", func() { early.Store(c.node.session.router.currentBackend() == nil) })
	resume := c.lease.pause() // c elects only once d serves: the re-attach, not a take-over
	a.node.Signal("SIGTERM")
	a.wait()
	d := start(t, "d", co.fresh(), b, true)
	d.awaitLog("shared server listening")
	resume()

	var notes []map[string]any
	c.client.tool("majordomus_peers", map[string]any{}, &notes)
	c.awaitLog("re-attached to the shared server")
	c.client.awaitNote(notes, "goes on with the checkout's shared server at "+b.url) // a failover is told
	if early.Load() {
		t.Error("the log said the client re-attached before the bridge served it: a message sent then met what served before")
	}
	if c.node.State() != machine.Attached || c.node.describe().URL != b.url {
		t.Fatalf("the node is %s at %s; want attached to %s", c.node.State(), c.node.describe().URL, b.url)
	}
	d.client.initialize()
	if peers := d.client.tool("majordomus_peers", map[string]any{}, nil); !strings.Contains(peers, "writing the tests") {
		t.Errorf("the new server's board lacks the re-attached session: %s", peers)
	}
	if got := c.client.caller(); got != id {
		t.Errorf("the client was %s and is %s after re-attaching", id, got)
	}
}

// When the leaseholder is gone and the lease cannot be used, the attached
// node serves its client alone, with the session carried, and says why:
// at warning, unless its client asked to hear errors only. (That notice
// came with the replayed notifications/initialized, before the level was
// replayed.)
func TestServedAloneAfterTheServerAndTheLeaseFail(t *testing.T) {
	for _, level := range []string{"", "error"} {
		t.Run("level "+cmp.Or(level, "unset"), func(t *testing.T) {
			co, b := exampleCheckout(t), newBoard(t)
			a, c, _ := servingAndAttached(t, co, b)
			if level != "" {
				if r := c.client.call("logging/setLevel", map[string]any{"level": level}, nil); r["result"] == nil {
					t.Fatalf("logging/setLevel answered %v", r)
				}
			}
			b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
			a.node.Signal("SIGTERM")
			a.wait()
			var notes []map[string]any
			c.client.tool("majordomus_list", map[string]any{}, &notes)
			if c.node.State() != machine.Alone {
				t.Fatalf("the node is %s, want alone", c.node.State())
			}
			if d := c.node.describe(); d.Leaseholder || d.URL != "" || !strings.Contains(d.Alone, "the lease directory is read-only") {
				t.Errorf("served alone, the node describes itself as %+v", d)
			}
			if level == "" {
				c.client.awaitNote(notes, "this session is served alone")
				return
			}
			c.client.tool("majordomus_repository", map[string]any{}, &notes) // after anything the move wrote
			if told(notes, "served alone") {
				t.Fatalf("a client that asked for errors only was told it is served alone: %v", notes)
			}
		})
	}
}

// A replay the new server refuses (it lost its lease meanwhile) fails that
// bridge: the node elects again and serves the client whatever comes next.
func TestAFailedReplayElectsAgain(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a, c, _ := servingAndAttached(t, co, b)

	refusing, key := refusingServer(t, co.fresh())
	b.force(
		machine.Observation{Class: machine.ClassLive, URL: refusing, Opaque: held{key: key}},
		machine.Observation{Class: machine.ClassUnusable, Reason: "no server will do"},
	)
	resume := c.lease.pause() // c elects once the lease is released, as a's server stops first
	a.node.Signal("SIGTERM")
	a.wait()
	resume()
	var notes []map[string]any
	c.client.tool("majordomus_list", map[string]any{}, &notes)
	c.awaitLog("refused a new session: lease_lost")
	if c.node.State() != machine.Alone {
		t.Fatalf("after the failed replay the node is %s, want alone", c.node.State())
	}
	c.client.awaitNote(notes, "this session is served alone")
	for _, line := range c.logs.lines() {
		if strings.Contains(line, "re-attached") {
			t.Errorf("the log says the client re-attached to the server that refused it: %s", line)
		}
	}
}

// An attempt that wins after the client left (a slow link of the lease)
// counts for nothing: the lease it made is released.
func TestALateWinIsReleased(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	b.gate = make(chan struct{})
	b.attempts = make(chan string, 4)
	c := start(t, "c", co.fresh(), b, true)
	<-b.attempts // the attempt is linking
	c.client.close()
	c.awaitState(machine.Exited)
	close(b.gate)
	res := c.wait()
	if res.err != nil || b.holding() != "" {
		t.Fatalf("the node ended with %v and the lease held by %q; want nothing held", res.err, b.holding())
	}
	if res.outcome.Signal != "" || !strings.Contains(res.outcome.Reason, "client") {
		t.Errorf("outcome %+v", res.outcome)
	}
}

// `serve` finds a server running: it says where and ends without starting
// a second one.
func TestServeEndsWhenAServerRuns(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	s := start(t, "serve", co.fresh(), b, false)
	if res := s.wait(); res.err != nil {
		t.Fatalf("serve ended with %v", res.err)
	}
	s.awaitLog("not starting a second one")
}

// `serve` that cannot share has no client to serve alone: it ends with the
// reason.
func TestServeWithoutALeaseEndsWithTheReason(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
	s := start(t, "serve", co.fresh(), b, false)
	res := s.wait()
	if res.err == nil || !strings.Contains(res.err.Error(), "read-only") {
		t.Fatalf("serve ended with %v, want the reason", res.err)
	}
}

// A client never served, whose layer cannot be served alone either, ends
// the node with the layer's error, which keeps its kind (the command's
// exit code depends on it).
func TestAnUnservableClientEndsTheNodeWithTheLayersError(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	if err := example.WriteBrokenObject(co.Root); err != nil {
		t.Fatal(err)
	}
	co.Strict = true
	b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
	c := start(t, "c", co.fresh(), b, true)
	res := c.wait()
	if !errors.Is(res.err, layer.ErrDegraded) || !strings.Contains(res.err.Error(), "read-only") {
		t.Fatalf("the node ended with %v; want the degraded layer and the lease's reason", res.err)
	}
}

// A served client whose every backend failed is answered, request by
// request, with every reason, and its stdio stays open.
func TestAServedClientWithNothingLeftIsAnsweredWithEveryReason(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a, c, _ := servingAndAttached(t, co, b)

	if err := example.WriteBrokenObject(co.Root); err != nil {
		t.Fatal(err)
	}
	c.node.co.Strict = true // the layer no longer serves, even alone
	b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
	a.node.Signal("SIGTERM")
	a.wait()
	for range 2 {
		answer := c.client.call("tools/list", map[string]any{}, nil)
		e, _ := answer["error"].(map[string]any)
		if e == nil || !strings.Contains(e["message"].(string), "read-only") || !strings.Contains(e["message"].(string), "degraded") {
			t.Fatalf("answered %v; want an error naming every reason", answer)
		}
	}
	if c.node.State() != machine.Alone {
		t.Errorf("the node is %s", c.node.State())
	}
}

// told reports whether a notifications/message among notes says text.
func told(notes []map[string]any, text string) bool {
	for _, n := range notes {
		if n["method"] == "notifications/message" && strings.Contains(fmtJSON(n["params"]), text) {
			return true
		}
	}
	return false
}

// refusingServer is a shared server that lost its lease: it refuses every
// new session. It returns its URL.
func refusingServer(t *testing.T, co *Checkout) (url, key string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := co.load(ctx, func() surface.Process { return surface.Process{Role: "lease-lost"} }, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	key = secret.New()
	h := httpserver.New(httpserver.Config{
		MCP:     srv.surface.MCP,
		Secret:  key,
		Refusal: func() *httpserver.Refusal { return &httpserver.Refusal{Message: "this server lost its lease"} },
		Logger:  zap.NewNop(),
	})
	go func() { _ = h.Serve(ln) }()
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	return httpserver.URLOf(ln.Addr()), key
}

// A request waiting for the election when nothing can ever serve the
// client is answered with why: the process's own end. (It was answered
// "shared server unavailable: context canceled", in a race with the exit.)
func TestARequestWaitingWhenNothingCanServeIsToldWhy(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	if err := example.WriteBrokenObject(co.Root); err != nil {
		t.Fatal(err)
	}
	co.Strict = true
	b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
	var resume func()
	c := startWith(t, "c", co.fresh(), b, true, func(cfg *Config) { resume = cfg.Lease.(*view).pause() })
	c.client.send(map[string]any{"id": 1.0, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "c", "version": "1"}}})
	resume() // the election goes on: the lease unusable, and the layer refused alone too
	answer := c.client.answer(1, nil)
	e, _ := answer["error"].(map[string]any)
	if msg, _ := e["message"].(string); !strings.Contains(msg, "degraded") || strings.Contains(msg, "context canceled") {
		t.Fatalf("the waiting request was answered %v; want why nothing serves it", answer)
	}
	c.wait()
}

// A session carried onto its own process served alone is told, as one
// carried to any other server is, that what it subscribed to may have
// changed while it moved: the server that sent its updates is gone, and
// nothing it changed meanwhile was said on either side.
func TestASessionCarriedToBeServedAloneIsToldWhatMayHaveChanged(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a, c, _ := servingAndAttached(t, co, b)
	const uri = "majordomus://adr/adr.0001@1"
	if r := c.client.call("resources/subscribe", map[string]any{"uri": uri}, nil); r["result"] == nil {
		t.Fatalf("resources/subscribe answered %v", r)
	}
	b.force(machine.Observation{Class: machine.ClassUnusable, Reason: "the lease directory is read-only"})
	a.node.Signal("SIGTERM")
	a.wait()
	var notes []map[string]any
	c.client.tool("majordomus_list", map[string]any{}, &notes)
	if c.node.State() != machine.Alone {
		t.Fatalf("the node is %s, want alone", c.node.State())
	}
	updated := func(f map[string]any) bool {
		p, _ := f["params"].(map[string]any)
		return f["method"] == "notifications/resources/updated" && p["uri"] == uri
	}
	for _, f := range notes {
		if updated(f) {
			return
		}
	}
	timeout := time.After(wait)
	for {
		select {
		case f := <-c.client.frames:
			if updated(f) {
				return
			}
		case <-timeout:
			t.Fatalf("the client subscribed to %s was never told it may have changed as its session moved; it got %v", uri, notes)
		}
	}
}
