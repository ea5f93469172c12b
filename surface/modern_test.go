package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// A 2026-07-28 client served in process (the stdio session, no initialize)
// is named on the board by its requests' clientInfo; a claim it sends does
// not move it off its session's peer.
func TestAModernStdioClientIsNamedOnTheBoard(t *testing.T) {
	f := newFixture(t)
	sess := stdioSession{server.NewInProcessSession("stdio", nil)}
	if err := f.s.MCP.RegisterSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	defer f.s.MCP.UnregisterSession(context.Background(), sess.SessionID())
	m := f.modern("claude-code", "p9")
	m.sess = sess

	b := peersOf(t, m.tool)
	if b.Count != 1 || b.Caller != "p1" || b.Peers[0].Client.Name != "claude-code" || b.Peers[0].Client.Version != "2.0" || b.Peers[0].Transport != "stdio" {
		t.Fatalf("the stdio client's board: %+v", b)
	}
	if a := announce(t, m.tool, "fix the lexer", "lib/lex"); a.Peer.ID != "p1" {
		t.Fatalf("its announcement was recorded on %s", a.Peer.ID)
	}
	m.name = "" // a request that names no client keeps the name
	if b := peersOf(t, m.tool); b.Peers[0].Client.Name != "claude-code" || b.Peers[0].Announcement == nil {
		t.Fatalf("after an unnamed request: %+v", b.Peers[0])
	}
}

// A bridged modern client (its bridge claims its id in _meta) is one peer
// under that id, named, heard by a legacy session: its announcement,
// overlaps and tool calls are those of any peer.
func TestABridgedModernPeerIsSeenByALegacySession(t *testing.T) {
	f := newFixture(t)
	legacy := f.connect("codex") // p1
	bridged := f.modern("claude-code", "p7")

	a := announce(t, bridged.tool, "split the parser", "lib/parse")
	if a.Peer.ID != "p7" || a.Peer.Client.Name != "claude-code" || a.Peer.Transport != "http" || len(a.Overlaps) != 0 {
		t.Fatalf("the bridged peer's announcement: %+v", a)
	}
	a = announce(t, legacy.tool, "rename lib", "lib")
	if len(a.Overlaps) != 1 || a.Overlaps[0].Peer != "p7" || a.Overlaps[0].Client != "claude-code" || a.Overlaps[0].Intent != "split the parser" {
		t.Fatalf("the legacy session does not see the bridged peer's claim: %+v", a.Overlaps)
	}
	b := peersOf(t, legacy.tool)
	p7 := b.peer("p7")
	if b.Count != 2 || b.Caller != "p1" || p7 == nil || !p7.Attached || p7.Announcement == nil || p7.Client.Version != "2.0" {
		t.Fatalf("the legacy session's board: %+v", b)
	}
	if b := peersOf(t, bridged.tool); b.Caller != "p7" || b.Count != 2 {
		t.Fatalf("the bridged peer's board: %+v", b)
	}
	out, _ := bridged.tool("majordomus_executions", map[string]any{"limit": 1})
	if !strings.Contains(string(out), `"peer":"p7"`) {
		t.Fatalf("its calls are not recorded as p7's: %s", out)
	}
	if id := f.connect("gemini-cli").f.s.Board.PeerID("gemini-cli-session"); id != "p8" {
		t.Fatalf("a session opened after the claim of p7 is %s, want p8", id)
	}
}

// A modern peer with no session leaves the board when unheard for the
// idle timeout; one that announced stays listed, detached, and is the same
// peer, its claim kept, when it is heard from again.
func TestAModernPeerLeavesAfterTheIdleTimeout(t *testing.T) {
	f, clk := newClockedFixture(t)
	legacy := f.connect("codex")
	quiet := f.modern("claude-code", "p5")
	quiet.rpc("tools/list", nil)
	announcer := f.modern("gemini-cli", nil) // p6: numbers go on after a claimed one
	announce(t, announcer.tool, "docs", "docs")

	clk.advance(testIdle - time.Millisecond)
	if b := peersOf(t, legacy.tool); b.Count != 3 {
		t.Fatalf("before the idle timeout: %+v", b)
	}
	clk.advance(time.Millisecond)
	b := peersOf(t, legacy.tool)
	if b.Count != 1 || b.peer("p5") != nil || b.peer("p6") == nil || b.peer("p6").Attached {
		t.Fatalf("after the idle timeout: %+v", b)
	}
	if back := peersOf(t, announcer.tool); back.Caller != "p6" || !back.peer("p6").Attached || back.peer("p6").Announcement.Intent != "docs" {
		t.Fatalf("the announcer came back as %+v", back)
	}
	quiet.rpc("tools/list", nil)
	if b := peersOf(t, legacy.tool); b.Count != 3 || b.peer("p5") == nil {
		t.Fatalf("the bridged peer came back: %+v", b)
	}
}

// An open subscriptions/listen stream keeps its peer past the idle
// timeout; when it ends, a peer heard from only through it leaves with
// it, and one heard from otherwise too has the idle timeout from then.
func TestAListenStreamKeepsItsModernPeer(t *testing.T) {
	f, clk := newClockedFixture(t, func(c *Config) { c.IdleTimeout = 10 * time.Second })
	legacy := f.connect("codex")
	listener := f.modern("claude-code", "p4")

	end := listener.listen()
	clk.advance(time.Minute)
	if b := peersOf(t, legacy.tool); b.peer("p4") == nil || !b.peer("p4").Attached {
		t.Fatalf("an open stream did not keep its peer: %+v", b)
	}
	end()
	if b := peersOf(t, legacy.tool); b.peer("p4") != nil {
		t.Fatalf("the peer outlived its only stream: %+v", b)
	}

	end = listener.listen()
	listener.rpc("tools/list", nil)
	clk.advance(time.Minute)
	end()
	clk.advance(10*time.Second - time.Millisecond)
	if b := peersOf(t, legacy.tool); b.peer("p4") == nil || !b.peer("p4").Attached {
		t.Fatalf("a peer heard from during its stream left with it: %+v", b)
	}
	clk.advance(time.Millisecond)
	if b := peersOf(t, legacy.tool); b.peer("p4") != nil {
		t.Fatalf("the peer outlived the idle timeout after its stream: %+v", b)
	}
}

// A claim that is not of the board's form, or names a live session's
// peer, is ignored: the request is its identity's. A request mcp-go
// refuses, or of a legacy revision without a session, adds nobody.
func TestABadPeerClaimIsIgnored(t *testing.T) {
	f := newFixture(t)
	legacy := f.connect("codex") // p1
	announce(t, legacy.tool, "own work", "lib")
	for _, claim := range []any{"p1", "p0", "q3", "P3", "p03", "p1234567", "p3\nSYSTEM", " p3", 3, ""} {
		a := announce(t, f.modern("claude-code", claim).tool, "claiming", "docs")
		if a.Peer.ID != "p2" {
			t.Fatalf("the claim %q made the request %s's", claim, a.Peer.ID)
		}
	}
	b := peersOf(t, legacy.tool)
	if b.Count != 2 || len(b.Peers) != 2 || b.Peers[0].Client.Name != "codex" || b.Peers[0].Announcement.Intent != "own work" {
		t.Fatalf("a claim reached the legacy peer or made another: %+v", b)
	}

	noCaps := f.modern("claude-code", nil).meta()
	delete(noCaps, "io.modelcontextprotocol/clientCapabilities")
	if _, code, _ := f.handle(context.Background(), server.NewInProcessSession("", nil), "tools/list", map[string]any{"_meta": noCaps}); code == 0 {
		t.Fatal("a modern request without capabilities was served")
	}
	old := map[string]any{"io.modelcontextprotocol/protocolVersion": "2025-11-25", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	f.handle(context.Background(), server.NewInProcessSession("", nil), "tools/list", map[string]any{"_meta": old})
	if b := peersOf(t, legacy.tool); len(b.Peers) != 2 {
		t.Fatalf("a refused or legacy request added a peer: %+v", b)
	}
}

// A legacy host and a modern one share one board (issue 13, point 6): a
// plain HTTP client of 2026-07-28 is one peer per the identity it sends,
// and each sees the other's announcement.
func TestLegacyAndModernClientsShareOneBoard(t *testing.T) {
	f := newFixture(t)
	legacy := f.connect("claude-code") // p1
	modern := f.modern("gemini-cli", nil)

	a := announce(t, modern.tool, "rework the board", "surface")
	if a.Peer.ID != "p2" || a.Peer.Client.Name != "gemini-cli" {
		t.Fatalf("the modern client's announcement: %+v", a)
	}
	a = announce(t, legacy.tool, "fix a claim", "surface/board.go")
	if len(a.Overlaps) != 1 || a.Overlaps[0].Peer != "p2" {
		t.Fatalf("the legacy client does not see the modern one's claim: %+v", a.Overlaps)
	}
	a = announce(t, modern.tool, "rework the board", "surface")
	if a.Peer.ID != "p2" || len(a.Overlaps) != 1 || a.Overlaps[0].Peer != "p1" || a.Overlaps[0].Client != "claude-code" {
		t.Fatalf("the modern client does not see the legacy one's claim: %+v", a)
	}
	b := peersOf(t, modern.tool)
	if b.Count != 2 || b.Caller != "p2" || b.peer("p1").Announcement == nil || b.peer("p2").Transport != "http" {
		t.Fatalf("the modern client's board: %+v", b)
	}
	other := f.modern("gemini-cli", nil)
	other.version = "3.0"
	if b := peersOf(t, other.tool); b.Caller != "p3" || b.Count != 3 {
		t.Fatalf("another identity is another peer: %+v", b)
	}
}

// A 2026-07-28 peer carried to this server, whose bridge replays its
// announcement claiming its id, is never on the board without the
// announcement: not even while the replay is served.
func TestACarriedModernPeerIsNeverOnTheBoardWithoutItsAnnouncement(t *testing.T) {
	var f *fixture
	var during *Peer // p7 as the board had it while its announcement was served
	seen := false
	f = newFixtureOf(t, layer.Config{}, func(c *Config) {
		c.ServerOptions = append(c.ServerOptions, server.WithToolHandlerMiddleware(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
			return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				peers, _ := f.s.Board.Peers()
				for _, p := range peers {
					if p.ID == "p7" {
						during = &p
					}
				}
				seen = true
				return next(ctx, req)
			}
		}))
	})
	m := f.modern("codex", "p7")
	meta := m.meta()
	meta[ReplayMeta] = true
	p := map[string]any{"name": announceTool, "arguments": map[string]any{"intent": "refactor the parser", "scope": []any{"lib/parse"}}, "_meta": meta}
	if _, _, msg := f.handle(carried(), m.session(), "tools/call", p); msg != "" {
		t.Fatal(msg)
	}
	if !seen || during != nil && during.Announcement == nil {
		t.Fatalf("while its announcement was replayed, the board had p7 as %+v", during)
	}
	if q := peersOf(t, m.tool).peer("p7"); q == nil || q.Announcement == nil {
		t.Fatalf("after the replay, p7 is %+v", q)
	}
}

// Peers known from their requests alone are bounded as sessions are: a
// client that names itself anew in every request takes, past the bound,
// the place of the peer heard from longest ago, never one holding a
// stream open.
func TestSessionlessPeersAreBounded(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	b := NewBoard(func() time.Time { return at }, time.Hour)
	sight := func(i int) string {
		at = at.Add(time.Millisecond)
		return b.Sight(ModernRequest{Client: &Client{Name: fmt.Sprintf("client-%d", i)}, Transport: "http"})
	}
	listening := sight(0)
	end := b.Listen(ModernRequest{Claim: listening})
	defer end()
	oldest := sight(1)
	for i := 2; i <= 2*maxSessionless; i++ {
		sight(i)
	}
	peers, attached := b.Peers()
	if attached != maxSessionless {
		t.Fatalf("%d sessionless peers attached, %d listed; the bound is %d", attached, len(peers), maxSessionless)
	}
	on := func(id string) bool {
		return slices.ContainsFunc(peers, func(p Peer) bool { return p.ID == id && p.Attached })
	}
	if !on(listening) || on(oldest) {
		t.Fatalf("the listening peer on the board: %v; the one heard from longest ago: %v", on(listening), on(oldest))
	}
}

// A modern request whose keys are spelled with escapes (a slash as \/, as
// PHP writes one) is read as mcp-go reads it: its peer is on the board,
// whatever it asks (a tools/list tells no tool hook of its peer).
func TestAModernRequestSpelledWithEscapesNamesItsPeer(t *testing.T) {
	f := newFixture(t)
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools\/list","params":{"_meta":{` +
		`"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{},` +
		`"io.modelcontextprotocol\/clientInfo":{"name":"php","version":"1"},` + strconv.Quote(PeerMeta) + `:"p7"}}}`
	sess := server.NewInProcessSession("", nil)
	if answer, _ := json.Marshal(f.s.MCP.HandleMessage(f.s.MCP.WithContext(context.Background(), sess), json.RawMessage(msg))); !strings.Contains(string(answer), `"result"`) {
		t.Fatalf("answered %s", answer)
	}
	peers, _ := f.s.Board.Peers()
	if !slices.ContainsFunc(peers, func(p Peer) bool { return p.ID == "p7" && p.Client.Name == "php" }) {
		t.Errorf("the board has %+v; want p7, php", peers)
	}
}
