package scenarios

// A bridge whose server is gone elects again on its next message: it takes
// over with the client's session carried, or re-attaches, or — when it can
// do neither — says so without closing the client's stdio (R3).

import (
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// S9: the leaseholder is killed -9; the bridge takes over on its next
// message, and the client's identity and announcement survive. Another
// bridge then re-attaches to it.
func TestABridgeTakesOverWhenItsServerIsKilled(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	if isErr, text, _ := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the ordering rule", "scope": []string{"apps"}}, nil); isErr {
		t.Fatal(text)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))

	var repo struct{ State string }
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("B's first call after the kill: %v %s %v", isErr, text, err)
	}
	// Both learn at once that A is gone: one takes over, the other
	// re-attaches to it.
	holder, other := oneTakesOver(t, b, c), b
	if holder == b {
		other = c
	}
	if _, err := holder.WaitLog(ctx(t), "electing again"); err != nil {
		t.Fatal(err)
	}
	url := serverURL(t, holder)
	if readLease(t, dir)["url"] != url {
		t.Fatalf("the lease does not name the server of the bridge that took over")
	}
	if _, err := other.WaitLog(ctx(t), "re-attached to the shared server", url); err != nil {
		t.Fatal(err)
	}
	// the user sees it in the host, as a log message
	if _, err := holder.WaitFrame(ctx(t), "a notifications/message", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), "took over")
	}); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, b)
	wantTransport := "http"
	if holder == b {
		wantTransport = "stdio"
	}
	var me *struct {
		Intent string
		Scope  []string
	}
	for _, p := range board.Peers {
		if p.ID == board.Caller {
			if p.Client.Name != "codex" || p.Transport != wantTransport {
				t.Fatalf("B's identity did not survive: %+v", p)
			}
			me = p.Announcement
		}
	}
	if me == nil || me.Intent != "the ordering rule" {
		t.Fatalf("B's announcement did not survive: %+v", board)
	}
	names := ""
	for _, p := range board.Peers {
		if p.Attached {
			names += p.Client.Name + " "
		}
	}
	if board.Count != 2 || !strings.Contains(names, "codex") || !strings.Contains(names, "gemini-cli") {
		t.Fatalf("the board after the take-over: %+v", board)
	}
}

// S11: a bridge that can neither take over (its layer fails under --strict)
// nor attach answers "shared server unavailable" naming every reason, keeps
// its stdio open, exits 0 and leaves no lease.
func TestABridgeThatCanNeitherServeNorAttachSaysSo(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	writeBroken(t, dir)
	b := bridged(t, dir, "codex", "--strict")

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	r, err := b.Call(ctx(t), "ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "shared server unavailable") ||
		!strings.Contains(r.Error.Message, "refusing to serve under --strict") {
		t.Fatalf("answer: %+v", r)
	}
	// the session stays open and keeps answering
	r, _ = b.Call(ctx(t), "tools/list", nil)
	if r.Error == nil || !strings.Contains(r.Error.Message, "shared server unavailable") {
		t.Fatalf("second answer: %+v", r)
	}
	b.CloseStdin()
	exitsWith(t, b, 0)
	noLease(t, dir)
}

// bridged starts a client that attaches, and waits until its bridge holds
// its event stream: by then everything the client sent at initialize was
// delivered, so no message of its is in flight when a scenario kills the
// server, and only the scenario's next message meets the failure.
func bridged(t *testing.T, dir, client string, args ...string) *mcpclient.Process {
	t.Helper()
	p := shared(t, dir, append([]string{"--log-level", "debug"}, args...)...)
	initialize(t, p, client)
	waitShared(t, p, "stream open")
	return p
}

// listTools does what hosts do after initialize: from the answer, a bridge
// learns which tools it may send again, and sends those on a kept connection.
func listTools(t *testing.T, p *mcpclient.Process) {
	t.Helper()
	if r, err := p.Call(ctx(t), "tools/list", map[string]any{}); err != nil || r.Error != nil {
		t.Fatalf("tools/list: %v %+v", err, r.Error)
	}
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_repository", nil, nil); err != nil || isErr {
		t.Fatalf("a read-only call: %s %v", text, err)
	}
}

// Bridges that keep connections to a leaseholder killed with -9 lose no
// call on them. Every tool of this server is read-only or idempotent, so
// after tools/list both bridges send their calls on kept connections, which
// the kill leaves dead: B's announcement and C's read-only call right after
// it are answered by the server that takes over, the announcement is
// on its board once, and nothing is answered "outcome unknown". (A tool that
// must not run twice gets a connection of its own: transport's tests.)
func TestKeptConnectionsToAKilledServerLoseNoCall(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	listTools(t, b)
	listTools(t, c)

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))

	isErr, text, err := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the release notes", "scope": []string{"docs"}}, nil)
	if err != nil || isErr {
		t.Fatalf("B's announcement after the kill: %s %v", text, err)
	}
	var repo struct{ State string }
	if isErr, text, err := c.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("C's read-only call after the kill: %v %s %v", isErr, text, err)
	}
	// Each learns that A is gone from its dropped stream or its call,
	// whichever comes first: one takes over, the other re-attaches.
	oneTakesOver(t, b, c)
	announced := 0
	for _, p := range peersOf(t, c).Peers {
		if p.Announcement != nil && p.Announcement.Intent == "the release notes" {
			announced++
		}
	}
	if announced != 1 {
		t.Fatalf("the announcement is on the new server's board %d times, want once", announced)
	}
	for _, p := range []*mcpclient.Process{b, c} {
		if n := p.CountLogs("outcome unknown"); n != 0 {
			t.Fatalf("a bridge answered outcome unknown: %s", strings.Join(p.Logs(), "\n"))
		}
		for _, f := range p.Frames() {
			if strings.Contains(string(f), "outcome unknown") {
				t.Fatalf("a client was answered outcome unknown: %s", f)
			}
		}
	}
}

// Peer ids survive take-overs (docs/design.md#the-layer): the leaseholder
// is killed -9; the bridge that takes over and the one that re-attaches
// keep the ids they were told, so agents that coordinate by id still find
// each other.
func TestPeerIDsSurviveATakeOver(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	before := map[string]string{}
	for _, p := range peersOf(t, c).Peers {
		before[p.Client.Name] = p.ID
	}
	if before["codex"] == "" || before["gemini-cli"] == "" || before["codex"] == before["gemini-cli"] {
		t.Fatalf("the board before: %v", before)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	// Both learn at once; one takes over, the other re-attaches.
	oneTakesOver(t, b, c)
	for name, p := range map[string]*mcpclient.Process{"codex": b, "gemini-cli": c} {
		if board := peersOf(t, p); board.Caller != before[name] {
			t.Fatalf("%s was %s and is %s after the take-over", name, before[name], board.Caller)
		}
	}
	board := peersOf(t, c)
	for _, p := range board.Peers {
		if p.Attached && before[p.Client.Name] != p.ID {
			t.Errorf("%s was %s and is listed as %s", p.Client.Name, before[p.Client.Name], p.ID)
		}
	}
}
