package surface

import (
	"context"
	"encoding/json"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// testClock is a clock the test moves.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newClockedFixture is a fixture whose surface reads the time from a
// testClock, configured further by each of with.
func newClockedFixture(t *testing.T, with ...func(*Config)) (*fixture, *testClock) {
	clk := &testClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	return newFixtureOf(t, layer.Config{}, append(with, func(c *Config) { c.Now = clk.now })...), clk
}

// modernClient is a 2026-07-28 client as the tests drive it: every request
// carries its _meta (version, capabilities, clientInfo unless its name is
// "", and peer, what a bridge relaying it claims, unless nil), on sess, or
// (nil) on a session of its own per request, as the HTTP server serves it.
type modernClient struct {
	f       *fixture
	name    string
	version string
	peer    any
	sess    server.ClientSession
}

func (f *fixture) modern(name string, peer any) *modernClient {
	return &modernClient{f: f, name: name, version: "2.0", peer: peer}
}

func (m *modernClient) meta() map[string]any {
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	if m.name != "" {
		meta[mcp.MetaKeyClientInfo] = map[string]any{"name": m.name, "version": m.version}
	}
	if m.peer != nil {
		meta[PeerMeta] = m.peer
	}
	return meta
}

func (m *modernClient) session() server.ClientSession {
	if m.sess != nil {
		return m.sess
	}
	return server.NewInProcessSession("", nil)
}

func (m *modernClient) rpc(method string, params map[string]any) json.RawMessage {
	m.f.t.Helper()
	p := maps.Clone(params)
	if p == nil {
		p = map[string]any{}
	}
	p["_meta"] = m.meta()
	result, _, message := m.f.handle(context.Background(), m.session(), method, p)
	if message != "" {
		m.f.t.Fatalf("%s: %s", method, message)
	}
	return result
}

func (m *modernClient) tool(name string, args map[string]any) (structured json.RawMessage, errText string) {
	m.f.t.Helper()
	return m.f.toolResult(name, m.rpc("tools/call", map[string]any{"name": name, "arguments": args}))
}

// listen opens a subscriptions/listen stream and returns once mcp-go has
// acknowledged it; the returned func ends the stream and returns once
// mcp-go has answered it.
func (m *modernClient) listen() (end func()) {
	m.f.t.Helper()
	sess := server.NewInProcessSession("", nil)
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"resourcesListChanged": true}, "_meta": m.meta()}})
	ctx, cancel := context.WithCancel(m.f.s.MCP.WithContext(context.Background(), sess))
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		m.f.s.MCP.HandleMessage(ctx, msg)
	}()
	select {
	case n := <-sess.ClientNotifications():
		if n.Method != mcp.MethodNotificationSubscriptionsAcknowledged {
			m.f.t.Fatalf("the listen stream began with %s", n.Method)
		}
	case <-answered:
		cancel()
		m.f.t.Fatal("the listen stream ended unacknowledged")
	}
	return func() {
		cancel()
		<-answered
	}
}

// stdioSession is a session that says it is the stdio client's, as the
// transport's Local session does.
type stdioSession struct{ *server.InProcessSession }

func (stdioSession) Transport() string { return "stdio" }

// boardAnswer is majordomus_peers' answer.
type boardAnswer struct {
	Count  int
	Caller string
	Peers  []Peer
}

func (b boardAnswer) peer(id string) *Peer {
	for i := range b.Peers {
		if b.Peers[i].ID == id {
			return &b.Peers[i]
		}
	}
	return nil
}

// peersOf asks for the board through call, a client's tool method.
func peersOf(t *testing.T, call func(string, map[string]any) (json.RawMessage, string)) boardAnswer {
	t.Helper()
	out, errText := call("majordomus_peers", nil)
	if errText != "" {
		t.Fatal(errText)
	}
	var b boardAnswer
	mustDecode(t, out, &b)
	return b
}

// announced is majordomus_announce's answer.
type announced struct {
	Peer     Peer
	Overlaps []Overlap
}

func announce(t *testing.T, call func(string, map[string]any) (json.RawMessage, string), intent string, scope ...any) announced {
	t.Helper()
	out, errText := call("majordomus_announce", map[string]any{"intent": intent, "scope": scope})
	if errText != "" {
		t.Fatal(errText)
	}
	var a announced
	mustDecode(t, out, &a)
	return a
}
