package scenarios

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A live agent stays on the board (docs/design.md#nothing-is-lost, issue 22
// point 4): a bridged 2026-07-28 client has no session, and is attached
// while its process lives however long it is silent — here past the
// server's idle timeout — and leaves the board when its process ends. A
// leaseholder whose own client left keeps serving while such a client
// lives, and ends after it.
func TestASilentModernClientStaysOnTheBoardWhileItsProcessLives(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, "--idle-timeout", "2s", "--heartbeat", "1s")
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := modernBridged(t, dir)
	peer := modernCaller(t, m)

	// The idle timeout passes: a direct session opened now expires at it.
	server := connect(t, dir)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`)
	if status, _, body := httpDo(t, "POST", server.URL, init, server.with(nil)); status != 200 {
		t.Fatalf("initialize: %d %s", status, body)
	}
	if _, err := a.WaitLog(ctx(t), "http session closed", "idle"); err != nil {
		t.Fatal(err)
	}
	if !attachedOn(t, a, peer) {
		t.Fatalf("the silent 2026-07-28 client %s left the board at the idle timeout", peer)
	}

	// Its owner's client leaves: the leaseholder serves on for the one
	// still alive, which is answered.
	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), "serving until the last session ends"); err != nil {
		t.Fatal(err)
	}
	if modernCaller(t, m) != peer {
		t.Fatal("the client's peer id changed")
	}

	// Its process ends: it leaves the board, and the server with it.
	m.CloseStdin()
	exitsWith(t, m, 0)
	exitsWith(t, a, 0)
	noLease(t, dir)
}

// A 2026-07-28 client that comes to a leaseholder whose own client left,
// as the server's last other session ends, keeps it serving: its first
// requests (its call, its bridge's own tools/list) hold no session, and it
// counts as coming until its presence opens, not only until its first
// request. Were it let go, the server would stop under a client it had
// just taken on, which would then take the lease over. The race is run a
// few times: the presence opens within milliseconds of that request.
func TestAModernNewcomerKeepsAServerWhoseOwnerLeft(t *testing.T) {
	for round := range 5 {
		dir := checkout(t)
		a := shared(t, dir, "--log-level", "debug")
		initialize(t, a, "claude-code")
		serverURL(t, a)
		b := bridged(t, dir, "codex")
		a.CloseStdin()
		if _, err := a.WaitLog(ctx(t), "serving until the last session ends"); err != nil {
			t.Fatal(err)
		}
		m := shared(t, dir, "--log-level", "debug")
		attached(t, m)
		b.CloseStdin() // the last other session ends, m's process attached
		exitsWith(t, b, 0)
		modernCaller(t, m) // m's first request
		if _, err := m.WaitLogAny(ctx(t), "presence open", "took over"); err != nil {
			t.Fatal(err)
		}
		if m.CountLogs("took over") != 0 || a.CountLogs("shared server stopped") != 0 {
			t.Fatalf("round %d: the server stopped under the client it had just taken on, which took the lease over", round)
		}
		m.CloseStdin()
		exitsWith(t, m, 0)
		exitsWith(t, a, 0)
		noLease(t, dir)
	}
}

// modernBridged starts a 2026-07-28 client, modern-agent, bridged (logging
// at debug) with args, once its bridge holds its presence.
func modernBridged(t *testing.T, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	m := shared(t, dir, append([]string{"--log-level", "debug"}, args...)...)
	openIn(t, m, modern, "modern-agent")
	if _, err := m.WaitLog(ctx(t), "presence open"); err != nil {
		t.Fatal(err)
	}
	return m
}

// modernCaller is the peer id majordomus_peers names a 2026-07-28
// client's requests by.
func modernCaller(t *testing.T, p *mcpclient.Process) string {
	t.Helper()
	return modernBoard(t, p).Caller
}

// modernBoard is the board majordomus_peers answers a 2026-07-28 client
// (modern-agent), which it names the caller on.
func modernBoard(t *testing.T, p *mcpclient.Process) boardView {
	t.Helper()
	r, err := p.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}}, "modern-agent"))
	var res struct {
		StructuredContent boardView `json:"structuredContent"`
	}
	if err != nil || r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.StructuredContent.Caller == "" {
		t.Fatalf("majordomus_peers: %s %+v %v", r.Result, r.Error, err)
	}
	return res.StructuredContent
}

// attachedOn reports whether p's board lists peer attached.
func attachedOn(t *testing.T, p *mcpclient.Process, peer string) bool {
	t.Helper()
	for _, q := range peersOf(t, p).Peers {
		if q.ID == peer {
			return q.Attached
		}
	}
	return false
}

// A host that probes in a sibling process (the TypeScript SDK's second
// revision: server/discover in a process it then ends, and the one it keeps
// started after) finds its client under the id it read in the sibling's
// instructions, and the sibling leaves no peer behind — with a shared
// server running (both bridged) and without (each its own leaseholder in
// turn). The test process is the host of both.
func TestAHostsProbeSiblingLeavesNoPeerAndItsInstructionsNameTheClient(t *testing.T) {
	for _, withServer := range []bool{true, false} {
		name := "bridged"
		if !withServer {
			name = "each its own leaseholder"
		}
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			var a *mcpclient.Process
			if withServer {
				a = shared(t, dir)
				initialize(t, a, "claude-code")
				serverURL(t, a)
			}
			sibling := shared(t, dir)
			told := openIn(t, sibling, modern, "modern-agent")
			first := modernCaller(t, sibling)
			if !strings.Contains(told, "You are peer "+first+" ") {
				t.Fatalf("the sibling's instructions do not name %s:\n%s", first, told)
			}
			sibling.CloseStdin()
			exitsWith(t, sibling, 0)

			kept := shared(t, dir)
			if told := openIn(t, kept, modern, "modern-agent"); !strings.Contains(told, "You are peer "+first+" ") {
				t.Fatalf("the kept process's instructions do not name %s, the id the host read:\n%s", first, told)
			}
			if got := modernCaller(t, kept); got != first {
				t.Fatalf("the kept process is %s; the host was told %s", got, first)
			}
			if !withServer {
				return
			}
			modern := 0
			for _, q := range peersOf(t, a).Peers {
				if q.Client.Name == "modern-agent" {
					modern++
				}
			}
			if modern != 1 {
				t.Fatalf("the board lists %d peers of the one client: %+v", modern, peersOf(t, a))
			}
		})
	}
}

// A 2026-07-28 client whose process takes the server over is on the new
// board by name before it speaks again: its session is carried with how it
// said who it is, and the process names it to its own server.
func TestAModernClientWhoseProcessTookOverIsOnTheBoardByName(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := modernBridged(t, dir)
	peer := modernCaller(t, m)

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	if _, err := m.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, bridged(t, dir, "cursor"))
	for _, p := range board.Peers {
		if p.ID == peer && p.Attached && p.Client.Name == "modern-agent" {
			return
		}
	}
	t.Fatalf("the client %s is not on the board by name: %+v", peer, board.Peers)
}

// Under --max-sessions 1, 2026-07-28 clients attach beyond it: a bridge's
// presence takes no place. Their connections (a presence and a call's
// each) are their owner's, never closed to make room; once they held
// every connection a cap lowered with the sessions' allowed, the next
// client's probe was closed as it connected, and that client judged the
// live server's lease busy and took it over.
func TestALowSessionsCapForcesNoTakeOver(t *testing.T) {
	dir := checkout(t)
	s := start(t, dir, "serve", "--http-port", "0", "--max-sessions", "1")
	url := serverURL(t, s)
	for i := range 3 {
		m := shared(t, dir, "--busy-grace", "3s")
		if r, err := m.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_announce",
			"arguments": map[string]any{"intent": "the parser", "scope": []string{"lib"}}}, "modern-agent")); err != nil || r.Error != nil {
			t.Fatalf("majordomus_announce: %+v %v", r.Error, err)
		}
		line, err := m.WaitLogAny(ctx(t), "attaching to the shared server", "busy lease")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, "attaching to the shared server") || !strings.Contains(line, url) {
			t.Fatalf("client %d, with the server at %s live, did not attach to it:\n%s", i+1, url, line)
		}
	}
}
