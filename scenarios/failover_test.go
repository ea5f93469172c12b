package scenarios

// A bridge whose server is gone elects again on its next message: it takes
// over with the client's session carried, or re-attaches, or — when it can
// do neither — says so without closing the client's stdio (R3).

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"majordomus-mcp/internal/mcpclient"
)

// S9: the leaseholder is killed -9; the bridge takes over on its next
// message, and the client's identity and announcement survive. Another
// bridge then re-attaches to it.
func TestABridgeTakesOverWhenItsServerIsKilled(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	c := bridged(t, dir, "gemini-cli")
	if isErr, text, _ := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the ordering rule", "scope": []string{"apps"}}, nil); isErr {
		t.Fatal(text)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))

	var repo struct{ State string }
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("B's first call after the kill: %v %s %v", isErr, text, err)
	}
	for _, says := range []string{"electing again", "took over as the shared server"} {
		if _, err := b.WaitLog(ctx(t), says); err != nil {
			t.Fatal(err)
		}
	}
	url := serverURL(t, b)
	if readLease(t, dir)["url"] != url {
		t.Fatalf("the lease does not name B's server")
	}
	// the user sees it in the host, as a log message
	if _, err := b.WaitFrame(ctx(t), "a notifications/message", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), "took over")
	}); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, b)
	var me *struct {
		Intent string
		Scope  []string
	}
	for _, p := range board.Peers {
		if p.ID == board.Caller {
			if p.Client.Name != "codex" || p.Transport != "stdio" {
				t.Fatalf("B's identity did not survive: %+v", p)
			}
			me = p.Announcement
		}
	}
	if me == nil || me.Intent != "the ordering rule" {
		t.Fatalf("B's announcement did not survive: %+v", board)
	}

	// C, bridged to A too, re-attaches to B on its next message.
	if isErr, text, err := c.CallTool(ctx(t), "majordomus_repository", nil, nil); err != nil || isErr {
		t.Fatalf("C after the kill: %s %v", text, err)
	}
	if _, err := c.WaitLog(ctx(t), "re-attached to the shared server", url); err != nil {
		t.Fatal(err)
	}
	board = peersOf(t, b)
	names := ""
	for _, p := range board.Peers {
		if p.Attached {
			names += p.Client.Name + " "
		}
	}
	if board.Count != 2 || !strings.Contains(names, "codex") || !strings.Contains(names, "gemini-cli") {
		t.Fatalf("B's board after C re-attached: %+v", board)
	}
}

// S10: a bridge re-attaches when a third process took the lease first.
func TestABridgeReattachesWhenAnotherProcessTookTheLease(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	if isErr, text, _ := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the installer", "scope": []string{"site"}}, nil); isErr {
		t.Fatal(text)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	url := serverURL(t, c)

	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, nil); err != nil || isErr {
		t.Fatalf("B after the kill: %s %v", text, err)
	}
	if _, err := b.WaitLog(ctx(t), "re-attached to the shared server", url); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, c)
	found := false
	for _, p := range board.Peers {
		if p.Client.Name == "codex" && p.Attached && p.Announcement != nil && p.Announcement.Intent == "the installer" {
			found = true
		}
	}
	if board.Count != 2 || !found {
		t.Fatalf("C's board: %+v", board)
	}
	b.CloseStdin()
	exitsWith(t, b, 0)
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

// A bridge whose server is killed -9, and whose lease directory is then
// made unusable, serves its client alone: the client, already initialized,
// is told so by a notifications/message at warning and in majordomus_server's
// findings, each with the reason (SPEC §3).
func TestABridgeServedAloneAfterAFailoverIsToldWhy(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	state := filepath.Join(dir, ".ai/local/state")
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("a file where the lease directory should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	var repo struct{ State string }
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("B's call after the kill: %v %s %v", isErr, text, err)
	}
	toldServedAlone(t, b, "")
	if n := peersOf(t, b).Count; n != 1 {
		t.Fatalf("a client served alone sees a board of %d", n)
	}
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
// it are answered by the server that takes over (B's), the announcement is
// on its board once, and nothing is answered "outcome unknown". (A tool that
// must not run twice gets a connection of its own: transport's tests.)
func TestKeptConnectionsToAKilledServerLoseNoCall(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	c := bridged(t, dir, "gemini-cli")
	listTools(t, b)
	listTools(t, c)

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))

	isErr, text, err := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the release notes", "scope": []string{"docs"}}, nil)
	if err != nil || isErr {
		t.Fatalf("B's announcement after the kill: %s %v", text, err)
	}
	if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	var repo struct{ State string }
	if isErr, text, err := c.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
		t.Fatalf("C's read-only call after the kill: %v %s %v", isErr, text, err)
	}
	if _, err := c.WaitLog(ctx(t), "re-attached to the shared server", serverURL(t, b)); err != nil {
		t.Fatal(err)
	}
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

// Peer ids survive take-overs (SPEC §3): the leaseholder is killed -9; the
// bridge that takes over and the one that re-attaches keep the ids they
// were told, so agents that coordinate by id still find each other.
func TestPeerIDsSurviveATakeOver(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	c := bridged(t, dir, "gemini-cli")
	before := map[string]string{}
	for _, p := range peersOf(t, c).Peers {
		before[p.Client.Name] = p.ID
	}
	if before["codex"] == "" || before["gemini-cli"] == "" || before["codex"] == before["gemini-cli"] {
		t.Fatalf("the board before: %v", before)
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	if board := peersOf(t, b); board.Caller != before["codex"] { // takes over
		t.Fatalf("codex was %s and is %s after taking over", before["codex"], board.Caller)
	}
	if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, c) // re-attaches
	if board.Caller != before["gemini-cli"] {
		t.Fatalf("gemini-cli was %s and is %s after re-attaching", before["gemini-cli"], board.Caller)
	}
	for _, p := range board.Peers {
		if p.Attached && before[p.Client.Name] != p.ID {
			t.Errorf("%s was %s and is listed as %s", p.Client.Name, before[p.Client.Name], p.ID)
		}
	}
}
