package scenarios

import (
	"os"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Convergence (docs/design.md#server-and-bridge): the lease of a running
// leaseholder is corrupted and taken over by a new client, which leaves the
// old server lease-lost with two bridges. Both move to the new leaseholder
// at once, their streams ended (a bridge's move at its next message is
// together.TestABridgeMovesOffAServerThatLostItsLease), and
// then the old leaseholder hands its own client over and stops its server,
// each with its peer id, client name and announcement carried: everyone is
// on one board.
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
	// The corrupt lease goes to whoever asks first: d, or c, whose quick
	// heartbeat may hear that the old server lost its lease before d starts.
	line, err := d.WaitLogAny(ctx(t), "shared server listening on", "bridging this stdio session")
	if err != nil {
		t.Fatal(err)
	}
	newURL := fieldOf(t, line, "url")

	peersOf(t, b) // answered wherever b is by now
	for _, p := range []struct {
		proc *mcpclient.Process
		name string
	}{{b, "codex"}, {c, "gemini-cli"}} {
		line, err := p.proc.WaitLogAny(ctx(t), "re-attached to the shared server", "took over as the shared server")
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		if url := fieldOf(t, line, "url"); url != newURL {
			t.Fatalf("%s went to %s, not the current server %s: %s", p.name, url, newURL, line)
		}
	}
	// Left with no session but its own client's, the old leaseholder hands
	// its client over too, and its server stops.
	for _, says := range [][]string{{"handing this client over"}, {"shared server stopped"}, {"re-attached to the shared server", newURL}} {
		if _, err := a.WaitLog(ctx(t), says...); err != nil {
			t.Fatal(err)
		}
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
// then hands its own client over: nobody spoke, every heartbeat is far off,
// and everyone is on one board with the peer id it had.
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
