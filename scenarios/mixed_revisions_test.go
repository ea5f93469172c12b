package scenarios

// A stdio client that speaks both revisions over one process — it opened
// a session with initialize and then sends 2026-07-28 requests, or probed
// with server/discover and then fell back to initialize, as a dual-era
// client does when its probe times out — is one peer on the board, as its
// in-process session is, whichever mode serves it (docs/protocol.md, On
// the board: each stdio client is one peer).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// announced is the answer of majordomus_announce: the caller's record and
// the other peers whose scopes overlap it.
type announced struct {
	Peer struct {
		ID string `json:"id"`
	} `json:"peer"`
	Overlaps []struct {
		Peer string `json:"peer"`
	} `json:"overlaps"`
}

// announceIn announces scope for p's client in version (2026-07-28 with
// client's _meta), and returns the answer.
func announceIn(t *testing.T, p *mcpclient.Process, version, client, scope string) announced {
	t.Helper()
	var meta map[string]any
	if version == modern {
		meta = mcpclient.ModernMeta(client)
	}
	var a announced
	isErr, text, err := p.CallToolWithMeta(ctx(t), "majordomus_announce", map[string]any{"intent": "work on " + scope, "scope": []string{scope}}, meta, &a)
	if err != nil || isErr {
		t.Fatalf("majordomus_announce in %s: %s %v", version, text, err)
	}
	return a
}

func TestAClientMixingRevisionsIsOnePeerInEveryMode(t *testing.T) {
	dir := checkout(t)
	leaseholder := shared(t, dir)
	serverURL(t, leaseholder)
	attached := shared(t, dir)
	fallenBack := shared(t, dir)
	for _, p := range []*mcpclient.Process{attached, fallenBack} {
		if _, err := p.WaitLog(ctx(t), "bridging this stdio session"); err != nil {
			t.Fatal(err)
		}
	}
	// A session first, then 2026-07-28 requests: in process (the
	// leaseholder's own client) and through a bridge.
	for name, p := range map[string]*mcpclient.Process{"leaseholder": leaseholder, "attached": attached} {
		initialize(t, p, name)
		legacy := announceIn(t, p, "2025-11-25", name, "src/"+name)
		again := announceIn(t, p, modern, name, "src/"+name)
		if again.Peer.ID != legacy.Peer.ID || len(again.Overlaps) > 0 {
			t.Errorf("%s: announced as %s in a session, then as %s in 2026-07-28, overlapping %+v: one client is one peer",
				name, legacy.Peer.ID, again.Peer.ID, again.Overlaps)
		}
	}
	// 2026-07-28 first, then a session (a dual-era client falling back).
	openIn(t, fallenBack, modern, "fallen-back")
	first := announceIn(t, fallenBack, modern, "fallen-back", "src/fallen-back")
	initialize(t, fallenBack, "fallen-back")
	then := announceIn(t, fallenBack, "2025-11-25", "fallen-back", "src/fallen-back")
	if then.Peer.ID != first.Peer.ID || len(then.Overlaps) > 0 {
		t.Errorf("fallen back: announced as %s in 2026-07-28, then as %s in a session, overlapping %+v: one client is one peer",
			first.Peer.ID, then.Peer.ID, then.Overlaps)
	}
	if b := peersOf(t, leaseholder); b.Count != 3 {
		t.Errorf("three clients are %d peers on the board: %+v", b.Count, b.Peers)
	}
}

// A client speaking both revisions hears, in every mode, what a session
// hears and what its 2026-07-28 listen asks for besides, tagged with the
// listen's id: bridged, its session and its listen are a session each on
// the shared server, and in process they are the one session it has.
func TestAClientMixingRevisionsHearsItsSessionAndItsListenInEveryMode(t *testing.T) {
	dir := checkout(t)
	lonely := checkout(t)
	if err := os.MkdirAll(filepath.Join(lonely, ".ai/local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lonely, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	leaseholder := shared(t, dir)
	serverURL(t, leaseholder)
	attachedP := shared(t, dir)
	attached(t, attachedP)
	alone := shared(t, lonely)
	if _, err := alone.WaitLog(ctx(t), "serving this client alone"); err != nil {
		t.Fatal(err)
	}
	modes := map[string]*mcpclient.Process{"leaseholder": leaseholder, "attached": attachedP, "alone": alone, "standalone": start(t, dir, "--standalone")}
	listens := map[*mcpclient.Process]json.RawMessage{}
	for _, p := range modes {
		initialize(t, p, "dual-era")
		listen, err := p.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"promptsListChanged": true}}, "dual-era"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.WaitFrame(ctx(t), "the listen acknowledged", func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
		}); err != nil {
			t.Fatal(err)
		}
		listens[p] = listen
	}
	from := map[*mcpclient.Process]int{}
	for _, p := range modes {
		from[p] = len(p.Frames())
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	editReviewPrompt(t, lonely, "5. Is the README still true?\n")
	for mode, p := range modes {
		for _, want := range []string{
			`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
			`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
			`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(listens[p]) + `}}}`,
		} {
			if _, err := p.WaitFrameAfter(ctx(t), mode+": "+want, from[p], func(f []byte) bool { return string(f) == want }); err != nil {
				t.Fatal(err)
			}
		}
	}
}
