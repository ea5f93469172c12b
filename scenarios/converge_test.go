package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Convergence (docs/design.md#server-and-bridge): the lease of a running
// leaseholder with two bridges is corrupted, which leaves its server
// lease-lost, and a new client starts. The old leaseholder hands its own
// client over at once; whoever elects first takes the lease over. Both
// bridges move to the current server at once, their streams ended (a
// bridge's move at its next message is
// together.TestABridgeMovesOffAServerThatLostItsLease), and then the old
// server stops. Each client keeps its peer id, client name and
// announcement: everyone is on one board.
func TestBridgesOfALeaseLostServerConvergeOnTheCurrentOne(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	c := bridged(t, dir, "gemini-cli", "--heartbeat", "300ms")
	if isErr, text, _ := c.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the release notes", "scope": []string{"docs"}}, nil); isErr {
		t.Fatal(text)
	}
	before := map[string]string{}
	for _, p := range peersOf(t, b).Peers {
		before[p.Client.Name] = p.ID
	}

	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	d := shared(t, dir)
	initialize(t, d, "cursor")
	// The corrupt lease goes to whoever asks first: a, which hands its own
	// client over at once, c, whose quick heartbeat may hear that the old
	// server lost its lease before d starts, or d.
	line, err := d.WaitLogAny(ctx(t), "shared server listening on", "bridging this stdio session")
	if err != nil {
		t.Fatal(err)
	}
	newURL := fieldOf(t, line, "url")

	peersOf(t, b) // answered wherever b is by now
	for _, p := range []struct {
		proc *mcpclient.Process
		name string
	}{{b, "codex"}, {c, "gemini-cli"}, {a, "claude-code"}} {
		line, err := p.proc.WaitLogAny(ctx(t), "re-attached to the shared server", "took over as the shared server")
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if url := fieldOf(t, line, "url"); url != newURL {
			t.Fatalf("%s went to %s, not the current server %s: %s", p.name, url, newURL, line)
		}
	}
	// The old server stops once its bridges have moved.
	if _, err := a.WaitLog(ctx(t), "shared server stopped"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, d)
	seen := map[string]bool{}
	for _, p := range board.Peers {
		if !p.Attached {
			continue
		}
		seen[p.Client.Name] = true
		if want, ok := before[p.Client.Name]; ok && p.ID != want {
			t.Errorf("%s was %s and is %s on the current board", p.Client.Name, want, p.ID)
		}
		if p.Client.Name == "gemini-cli" && (p.Announcement == nil || p.Announcement.Intent != "the release notes") {
			t.Errorf("gemini-cli's announcement was not carried: %+v", p.Announcement)
		}
	}
	if !seen["claude-code"] || !seen["codex"] || !seen["gemini-cli"] || !seen["cursor"] {
		t.Fatalf("the current board lacks a bridge: %+v", board.Peers)
	}
}

// Idle bridges do not wait for their heartbeat (docs/design.md#convergence):
// a server that lost its lease ends its streams, and a bridge whose stream
// ends with no call in flight moves at once, a 2026-07-28 client's presence
// too, which holds no session a heartbeat would ping. The old leaseholder
// hands its own client over at once, and its server stops once they moved:
// nobody spoke, every heartbeat is far off, and everyone is on one board
// with the peer id it had.
func TestIdleBridgesOfALeaseLostServerMoveAtOnce(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex", "--heartbeat", "80s")
	m := modernBridged(t, dir, "--heartbeat", "80s")
	// Its client listens for the lists: a request in flight, not a call.
	if _, err := m.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourcesListChanged": true}}, "modern-agent")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WaitFrame(ctx(t), "the subscriptions acknowledged", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
	}); err != nil {
		t.Fatal(err)
	}
	before := map[string]string{"modern-agent": modernCaller(t, m)}
	for _, p := range peersOf(t, b).Peers {
		before[p.Client.Name] = p.ID
	}

	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Whoever elects first takes the corrupt lease over; the others attach.
	for _, p := range []*mcpclient.Process{b, m, a} {
		line, err := p.WaitLogAny(ctx(t), "re-attached to the shared server", "took over as the shared server")
		if err != nil {
			t.Fatal(err)
		}
		if p == m && strings.Contains(line, "re-attached") {
			if err := m.WaitLogs(ctx(t), 2, "presence open"); err != nil { // its client is on the board again
				t.Fatal(err)
			}
		}
	}
	if _, err := a.WaitLog(ctx(t), "shared server stopped"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, b)
	on := map[string]string{}
	for _, p := range board.Peers {
		if p.Attached {
			on[p.Client.Name] = p.ID
		}
	}
	for name, id := range before {
		if on[name] != id {
			t.Errorf("%s (%s) is not on the current board: %+v", name, id, board.Peers)
		}
	}
	// What the client listens for, it hears from the current server.
	frames := len(m.Frames())
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	if _, err := m.WaitFrameAfter(ctx(t), "resources/list_changed after the move", frames, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
}

// A leaseholder whose lease is lost hands its own client over at once,
// even while a plain HTTP session keeps its server serving (R6). Here
// nobody else runs, so its process takes the emptied lease itself and
// serves its client from a new server beside the old one. The old server
// still answers the plain session and refuses new ones, naming the new
// server; it stops when that session ends. A later client finds the first
// on its board, under the peer id it had.
func TestALeaseholderHandsItsClientOverWhileAPlainSessionRemains(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	oldURL := serverURL(t, a)
	old := connect(t, dir)
	plain := &plainSession{t: t, c: old, sid: openPlainSession(t, old)}
	id := peersOf(t, a).Caller

	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	line, err := a.WaitLog(ctx(t), "took over as the shared server")
	if err != nil {
		t.Fatal(err)
	}
	newURL := fieldOf(t, line, "url")
	if newURL == oldURL {
		t.Fatalf("the client was handed over to the old server %s", oldURL)
	}
	if r, err := plain.call("tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}); err != nil || r.Error != nil {
		t.Fatalf("the plain session on the old server: %v %v", err, r.Error)
	}
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`)
	if _, _, body := httpDo(t, "POST", old.URL, init, old.with(nil)); !strings.Contains(string(body), "lease_lost") || !strings.Contains(string(body), newURL) {
		t.Fatalf("a new session at the old server was answered %s; want lease_lost naming %s", body, newURL)
	}

	e := shared(t, dir)
	initialize(t, e, "codex")
	onBoard := false
	board := peersOf(t, e)
	for _, p := range board.Peers {
		onBoard = onBoard || (p.Attached && p.Client.Name == "claude-code" && p.ID == id)
	}
	if !onBoard {
		t.Fatalf("the current board lacks claude-code as %s: %+v", id, board.Peers)
	}
	plain.end()
	if _, err := a.WaitLog(ctx(t), "shared server stopped with its last session"); err != nil {
		t.Fatal(err)
	}
	if board := peersOf(t, a); board.Caller != id {
		t.Fatalf("after the old server stopped, the client is %s, not %s", board.Caller, id)
	}
}
