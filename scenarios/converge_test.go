package scenarios

import (
	"os"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Convergence (docs/design.md#server-and-bridge): the lease of a running
// leaseholder is corrupted and taken over by a new client, which leaves the
// old server lease-lost with two bridges. The busy bridge moves to the new
// leaseholder after its next message, the idle one within a heartbeat, and
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

	peersOf(t, b) // its next message: answered by the old server, which says its lease is lost
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
