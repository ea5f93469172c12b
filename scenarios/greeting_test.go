package scenarios

import (
	"bytes"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// greets is what an attaching process logs (at debug) when it greets its
// client.
const greets = "answered this client's initialize with the words of the server"

// An attaching client's initialize is answered as soon as the lease's
// server proved itself, before the client's session opens there (issue
// 33, B1), and with that server's own bytes: the same initialize, sent
// straight to the server claiming the same peer id once the client has
// left, is answered byte for byte the same, whatever the client says of
// itself (a blank name or none is "(not initialized)" on the board). A
// client whose initialize comes after its process chose the bridge is
// relayed as before, so a few attach until one is greeted.
func TestAnAttachingClientIsGreetedWithTheServersOwnAnswer(t *testing.T) {
	dir := checkout(t)
	lh := shared(t, dir)
	initialize(t, lh, "claude-code")
	serverURL(t, lh)
	for _, client := range []string{`,"clientInfo":{"name":"codex","version":"0.9"}`, `,"clientInfo":{"name":"","version":"0.9"}`, `,"clientInfo":{"name":"   "}`, ``} {
		greetedAsServed(t, dir, lh, `{"jsonrpc":"2.0","id":"greeted","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}`+client+`}}`)
	}
}

// greetedAsServed attaches clients sending init to lh's server until one
// is greeted, then sends init to the server itself claiming the greeted
// peer id, and fails unless the two answers are the same bytes.
func greetedAsServed(t *testing.T, dir string, lh *mcpclient.Process, init string) {
	t.Helper()
	var greeting []byte
	var peer string
	for try := 0; greeting == nil; try++ {
		if try == 5 {
			t.Fatalf("no attaching client of five was greeted for %s", init)
		}
		p := shared(t, dir, "--log-level", "debug")
		if err := p.SendLine(init); err != nil {
			t.Fatal(err)
		}
		answer, err := p.WaitFrame(ctx(t), "the answer to initialize", func(f []byte) bool { return bytes.Contains(f, []byte(`"id":"greeted"`)) })
		if err != nil {
			t.Fatal(err)
		}
		attached(t, p)
		if err := p.SendLine(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			t.Fatal(err)
		}
		board := peersOf(t, p)
		if logs := strings.Join(p.Logs(), "\n"); strings.Contains(logs, greets) {
			greeting, peer = answer, logField(t, p, greets, "peer")
			if board.Caller != peer || board.Count != 2 {
				t.Fatalf("greeted as %s, the board says: %+v", peer, board)
			}
			if strings.Contains(logs, "re-attached") { // the server that greeted it seats it
				t.Fatalf("a greeted client was re-attached:\n%s", logs)
			}
		}
		p.CloseStdin()
		exitsWith(t, p, 0)
		for peersOf(t, lh).Count != 1 {
			if _, err := lh.WaitLog(ctx(t), "session closed", board.Caller); err != nil {
				t.Fatal(err)
			}
		}
	}

	server := connect(t, dir)
	status, headers, answer := httpDo(t, "POST", server.URL, []byte(init), server.with(map[string]string{"Majordomus-Peer": peer}))
	if status != 200 || !bytes.Equal(bytes.TrimSpace(answer), bytes.TrimSpace(greeting)) {
		t.Fatalf("greeted with\n%s\nthe server answers (%d)\n%s", greeting, status, answer)
	}
	if !strings.Contains(string(answer), `"io.majordomus/peer":"`+peer+`"`) {
		t.Fatalf("the server did not grant the claim %s: %s", peer, answer)
	}
	// The session the server opened ends, so that the next client meets
	// the board this one met.
	if status, _, _ := httpDo(t, "DELETE", server.URL, nil, server.with(map[string]string{"Mcp-Session-Id": headers.Get("Mcp-Session-Id")})); status != 200 {
		t.Fatalf("DELETE: %d", status)
	}
}

// An initialize that mcp-go refuses is never greeted: its refusal comes
// from the server, and nothing is carried that no server would open.
func TestARefusedInitializeIsNotGreeted(t *testing.T) {
	dir := checkout(t)
	lh := shared(t, dir)
	initialize(t, lh, "claude-code")
	serverURL(t, lh)
	p := shared(t, dir, "--log-level", "debug")
	if err := p.SendLine(`{"jsonrpc":"2.0","id":"bad","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":5,"clientInfo":{"name":"codex","version":"0.9"}}}`); err != nil {
		t.Fatal(err)
	}
	answer, err := p.WaitFrame(ctx(t), "the answer to initialize", func(f []byte) bool { return bytes.Contains(f, []byte(`"id":"bad"`)) })
	if err != nil {
		t.Fatal(err)
	}
	attached(t, p)
	if !bytes.Contains(answer, []byte(`"error"`)) || strings.Contains(strings.Join(p.Logs(), "\n"), "answered this client's initialize") {
		t.Fatalf("a refused initialize was greeted: %s", answer)
	}
	initialize(t, p, "codex") // the client can still open its session
}

// A client that leaves as soon as it is greeted (a host that only asked
// what the server offers) leaves nothing on the server's board: the
// session its bridge was opening there is seen through and ended before
// its process exits. So its host's next process is greeted again, under
// the same peer id. (One such session in ten or twenty stayed until the
// server's idle timeout, holding the host's peer id: every later process
// of that host was given another, and none was greeted.)
func TestAClientLeavingAsItIsGreetedLeavesNothingBehind(t *testing.T) {
	dir := checkout(t)
	lh := shared(t, dir)
	initialize(t, lh, "claude-code")
	serverURL(t, lh)
	const init = `{"jsonrpc":"2.0","id":"quick","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"0.9"}}}`
	peers := map[string]int{}
	for i := range 10 {
		p := shared(t, dir, "--log-level", "debug")
		if err := p.SendLine(init); err != nil {
			t.Fatal(err)
		}
		if _, err := p.WaitFrame(ctx(t), "the answer to initialize", func(f []byte) bool { return bytes.Contains(f, []byte(`"id":"quick"`)) }); err != nil {
			t.Fatal(err)
		}
		p.CloseStdin()
		exitsWith(t, p, 0)
		if board := peersOf(t, lh); board.Count != 1 {
			t.Fatalf("client %d left as it was answered, and the board still lists %d peers: %+v", i, board.Count, board.Peers)
		}
		if strings.Contains(strings.Join(p.Logs(), "\n"), greets) {
			peers[logField(t, p, greets, "peer")]++
		}
	}
	if len(peers) != 1 {
		t.Fatalf("the host's processes were greeted under the peer ids %v; want one, kept", peers)
	}
}
