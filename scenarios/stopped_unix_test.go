//go:build unix

package scenarios

import (
	"encoding/json"
	"fmt"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A stopped process (SIGSTOP, which Windows does not have) is silent but
// alive: its lease is busy, not stale.

// A stopped leaseholder (SIGSTOP: a laptop lid, a debugger) is silent but
// alive. A new client judges its lease busy, waits out the busy grace on
// its own clock, and takes it over through the machine's busy edge (R1);
// the stopped process, continued, finds its lease lost and ends with its
// client.
func TestAStoppedLeaseholderIsTakenOverAfterTheBusyGrace(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	stop(t, a)

	const grace = time.Second
	b := shared(t, dir, "--busy-grace", grace.String(), "--probe-timeout", "500ms", "--log-level", "debug")
	initialize(t, b, "codex")
	firstBusy, err := b.WaitLog(ctx(t), "waiting for the lease", `"class":"busy"`)
	if err != nil {
		t.Fatal(err)
	}
	waiting := fmt.Sprintf("waiting for the server of the lease's owner (pid %d) to answer, until ", a.Cmd.Process.Pid)
	if _, err := b.WaitLog(ctx(t), `"level":"info"`, waiting, "then the lease is taken over"); err != nil {
		t.Fatal(err)
	}
	takeOver, err := b.WaitLog(ctx(t), "busy lease:", "its owner", "is alive", "taking it over", `"class":"busy"`)
	if err != nil {
		t.Fatal(err)
	}
	if waited := logTime(t, takeOver).Sub(logTime(t, firstBusy)); waited < grace {
		t.Fatalf("taken over %s after the first busy judgement, before the busy grace of %s", waited, grace)
	}
	if _, err := b.WaitLog(ctx(t), `"msg":"transition"`, `"from":"electing","to":"leaseholder"`); err != nil {
		t.Fatal(err)
	}
	if n := b.CountLogs(waiting); n != 1 {
		t.Fatalf("the wait was said %d times, want once", n)
	}
	if strings.Contains(strings.Join(b.Logs(), "\n"), "stale lease") {
		t.Fatalf("the stopped owner's lease was judged stale, not waited out as busy:\n%s", strings.Join(b.Logs(), "\n"))
	}
	// B answered its handshake while electing, so its server is waited
	// for here, not implied by the handshake's answer.
	if url := serverURL(t, b); readLease(t, dir)["url"] != url {
		t.Fatal("the lease does not name B's server")
	}

	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
	if readLease(t, dir)["url"] != serverURL(t, b) {
		t.Fatal("the continued process touched B's lease")
	}
}

// A leaseholder stopped while it was taken over answers nothing its
// client wrote meanwhile from the server it no longer holds: continued,
// it finds its lease lost before it answers, and the calls go to the
// checkout's current server, into its board and history, as the calls of
// a bridge do.
func TestAContinuedLeaseholderAnswersItsClientFromTheCurrentServer(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	old := serverURL(t, a)
	stop(t, a)
	b := shared(t, dir, "--busy-grace", "1s", "--probe-timeout", "500ms")
	initialize(t, b, "codex")
	if _, err := b.WaitLog(ctx(t), "shared server listening on"); err != nil {
		t.Fatal(err)
	}
	url := serverURL(t, b)
	// Written while a is stopped: they wait in its stdin.
	server, err := a.Send("tools/call", map[string]any{"name": "majordomus_server", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	peers, err := a.Send("tools/call", map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r, err := a.Await(ctx(t), server)
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), url) || strings.Contains(string(r.Result), old) {
		t.Fatalf("majordomus_server, asked of the continued process, = %s %v (%v); want the current server at %s", r.Result, r.Error, err, url)
	}
	if r, err = a.Await(ctx(t), peers); err != nil || r.Error != nil || !strings.Contains(string(r.Result), `\"count\":2`) {
		t.Fatalf("majordomus_peers, asked of the continued process, = %s %v (%v); want both clients on one board", r.Result, r.Error, err)
	}
	kept := map[string]bool{}
	for _, e := range executionsOf(t, b) {
		kept[e.Tool] = true
	}
	if !kept["majordomus_server"] || !kept["majordomus_peers"] {
		t.Fatalf("the current server's history keeps %v; want the continued process's calls", kept)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
}

// logTime is the time stamp of a JSON log line.
func logTime(t *testing.T, line string) time.Time {
	t.Helper()
	var entry struct{ TS string }
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		t.Fatalf("a log line that is not JSON: %s", line)
	}
	ts, err := time.Parse(time.RFC3339Nano, entry.TS)
	if err != nil {
		t.Fatalf("the log line's time %q: %v", entry.TS, err)
	}
	return ts
}

// A stopped server is a gone server (docs/design.md#server-and-bridge):
// calls a bridge has in flight to a stopped leaseholder are answered within
// busy grace + election bound — a read-only one resent where the lease was
// taken over, one the bridge cannot know is safe never written to the
// stopped server (which cannot prove itself on a new connection) and so
// sent on — and an idle bridge's next call too. Continued, the stopped
// process finds its lease lost, keeps no bridge, and ends with its own
// client.
func TestCallsToAStoppedLeaseholderAreAnsweredWithinTheBound(t *testing.T) {
	const grace, bound = time.Second, 5 * time.Second
	// Each election attempt probes the silent server for the probe
	// timeout: the bound leaves room for the busy grace and a few of them.
	flags := []string{"--busy-grace", grace.String(), "--election-bound", bound.String(), "--probe-timeout", "500ms"}
	dir := checkout(t)
	a := shared(t, dir, flags...)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	b := shared(t, dir, flags...)
	initialize(t, b, "codex")
	c := shared(t, dir, append(flags, "--log-level", "debug")...)
	initialize(t, c, "gemini-cli")
	for _, p := range []*mcpclient.Process{b, c} {
		attached(t, p)
	}
	// c never lists tools: its bridge asked the server which are safe to
	// resend as its session opened.
	if _, err := c.WaitLog(ctx(t), "learned from the server which tools may be resent"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Call(ctx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}

	stop(t, a)
	stopped := time.Now()
	readOnly, err := b.Send("tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	// A tool the bridge knows nothing of may have run once sent, so it
	// goes on a connection of its own; the stopped server cannot prove it
	// holds the secret there, so the call is never written to it, provably
	// did not run, and goes to what serves next (which knows no such tool).
	unknown, err := b.Send("tools/call", map[string]any{"name": "majordomus_not_listed", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.Await(ctx(t), readOnly)
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "repository_id") {
		t.Fatalf("the read-only call in flight was answered %s %v (%v)", r.Result, r.Error, err)
	}
	if took := time.Since(stopped); took > grace+bound {
		t.Fatalf("the read-only call was answered %s after the leaseholder stopped; the bound is %s", took, grace+bound)
	}
	u, err := b.Await(ctx(t), unknown)
	if err != nil || u.Error == nil || strings.Contains(u.Error.Message, "outcome unknown") || !strings.Contains(u.Error.Message, "not found") {
		t.Fatalf("the call never written to the stopped server was answered %s %v (%v)", u.Result, u.Error, err)
	}
	if _, err := b.WaitLog(ctx(t), "did not prove it holds the lease's secret"); err != nil {
		t.Fatal(err)
	}

	idle := time.Now()
	if r, err := c.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}); err != nil || r.Error != nil {
		t.Fatalf("the idle bridge's next call: %v %v", err, r.Error)
	}
	if took := time.Since(idle); took > grace+bound {
		t.Fatalf("the idle bridge's next call was answered after %s; the bound is %s", took, grace+bound)
	}
	if now := serverURL(t, b); readLease(t, dir)["url"] != now || now == url {
		t.Fatalf("the lease names %v; want the server that took over, %s", readLease(t, dir)["url"], now)
	}

	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
}

// One busy grace (docs/design.md#sharing-heals): a bridged call to a
// stopped leaseholder waits out the busy grace once, on the bridge's silent
// probes; the election that follows counts that wait toward its own grace,
// says so, and takes the lease over at its first busy judgement, without a
// second wait.
func TestAStoppedLeaseholderCostsACallOneBusyGrace(t *testing.T) {
	const grace = 2 * time.Second
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	b := shared(t, dir, "--busy-grace", grace.String(), "--probe-timeout", "500ms", "--election-bound", "10s", "--log-level", "debug")
	initialize(t, b, "codex")
	// The bridge knows the call is read-only, so that it rides a kept
	// connection and waits on the watch's probes (a call on a new one
	// waits on its proof, which counts too, but for the probe timeout
	// only).
	if _, err := b.WaitLog(ctx(t), "learned from the server which tools may be resent"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Call(ctx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}

	stop(t, a)
	r, err := b.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}})
	if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "repository_id") {
		t.Fatalf("the call to the stopped leaseholder was answered %s %v (%v)", r.Result, r.Error, err)
	}
	// On a loaded machine the kept connection may be gone by then, and the
	// call waits on a new one's proof instead: that silence counts too, for
	// the probe timeout it lasted, and the election waits out the rest.
	failed, err := b.WaitLogAny(ctx(t), "has answered no probe for", "has answered no proof of a new connection for")
	if err != nil {
		t.Fatal(err)
	}
	credit := fmt.Sprintf("the server at %s had answered no probe for", url)
	if _, err := b.WaitLog(ctx(t), `"level":"info"`, credit, "that counts toward the busy grace (2s)"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitLog(ctx(t), "busy lease:", "taking it over"); err != nil {
		t.Fatal(err)
	}
	if n := b.CountLogs("waiting for the server of the lease's owner"); n != 0 && strings.Contains(failed, "no probe for") {
		t.Fatalf("the election waited on the stopped server again (%d wait lines):\n%s", n, strings.Join(b.Logs(), "\n"))
	}
	if readLease(t, dir)["url"] != serverURL(t, b) {
		t.Fatal("the lease does not name the server that took over")
	}
}

// A client that never lists tools has a read-only call in flight when its
// leaseholder is killed -9 — three times in a row, each time with another
// leaseholder already in its place — and the call is sent again and
// answered each time (docs/design.md#server-and-bridge). SIGSTOP first
// holds the call in flight: the kernel takes the request, nothing answers,
// and kill -9 then breaks it off. Whether the stopped process could have
// read it decides how the bridge knows it may send it again — it provably
// never ran, or the server's annotations say it may run twice; the second
// way is proved on its own, with the call under way in the server, by
// transport.TestAReadOnlyCallIsResentOnEveryFailoverWithoutTheClientListingTools.
func TestAReadOnlyCallInFlightIsResentOnThreeFailoversInARow(t *testing.T) {
	dir := checkout(t)
	takeOver := []string{"--busy-grace", "300ms", "--probe-timeout", "200ms"}
	holder := shared(t, dir, takeOver...)
	initialize(t, holder, "leaseholder-0")
	serverURL(t, holder)
	// The client's own busy grace is long: only the kill ends its call.
	b := shared(t, dir, "--busy-grace", "30s", "--election-bound", "40s", "--log-level", "debug")
	initialize(t, b, "codex") // and never tools/list
	if _, err := b.WaitLog(ctx(t), "learned from the server which tools may be resent"); err != nil {
		t.Fatal(err)
	}
	for round := 1; round <= 3; round++ {
		stop(t, holder)
		id, err := b.Send("tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		next := shared(t, dir, takeOver...) // judges the stopped holder busy, then takes over
		initialize(t, next, fmt.Sprintf("leaseholder-%d", round))
		nextURL := serverURL(t, next)
		holder.Signal(syscall.SIGKILL)
		holder.Wait(ctx(t))
		r, err := b.Await(ctx(t), id)
		if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "repository_id") {
			t.Fatalf("round %d: the read-only call in flight was answered %s %v (%v)", round, r.Result, r.Error, err)
		}
		if _, err := b.WaitLog(ctx(t), "re-attached to the shared server", nextURL); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		holder = next
	}
}

// A call its client cancels while the leaseholder is stopped is not sent
// again to the server that takes over, and is answered nothing: a
// cancelled request gets no answer (MCP), and one resent would run there,
// in the checkout's history, for nobody. Nor is the cancel, stuck on the
// stopped server too, sent again: a new call that reuses the id is
// answered.
func TestACallCancelledWhileItsServerIsStoppedIsNotSentAgain(t *testing.T) {
	dir := checkout(t)
	takeOver := []string{"--busy-grace", "300ms", "--probe-timeout", "200ms"}
	holder := shared(t, dir, takeOver...)
	initialize(t, holder, "leaseholder-0")
	serverURL(t, holder)
	b := shared(t, dir, "--busy-grace", "30s", "--election-bound", "40s", "--log-level", "debug")
	initialize(t, b, "codex")
	if _, err := b.WaitLog(ctx(t), "learned from the server which tools may be resent"); err != nil {
		t.Fatal(err)
	}
	stop(t, holder)
	repository := map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}
	id, err := b.Send("tools/call", repository)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "the user pressed Esc"}); err != nil {
		t.Fatal(err)
	}
	// the same again, and the id reused for a call the client keeps
	reused := []string{
		`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"majordomus_peers","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}`,
		`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"majordomus_list","arguments":{}}}`,
	}
	for _, line := range reused {
		if err := b.SendLine(line); err != nil {
			t.Fatal(err)
		}
	}
	next := shared(t, dir, takeOver...)
	initialize(t, next, "leaseholder-1")
	serverURL(t, next)
	holder.Signal(syscall.SIGKILL)
	holder.Wait(ctx(t))
	if r, err := b.Await(ctx(t), json.RawMessage(`"r"`)); err != nil || r.Error != nil || !strings.Contains(string(r.Result), "uri") {
		t.Fatalf("the call that reused a cancelled id was answered %s %v (%v)", r.Result, r.Error, err)
	}
	if r, err := b.Call(ctx(t), "tools/call", repository); err != nil || r.Error != nil {
		t.Fatalf("the call after the take-over was answered %s %v (%v)", r.Result, r.Error, err)
	}
	answered := func() bool {
		for _, f := range b.Frames() {
			var r mcpclient.Response
			if json.Unmarshal(f, &r) == nil && string(r.ID) == string(id) {
				return true
			}
		}
		return false
	}
	if answered() {
		t.Fatalf("the cancelled call was answered:\n%s", strings.Join(b.Logs(), "\n"))
	}
	if _, err := b.WaitLog(ctx(t), "not sent again: its client cancelled it"); err != nil {
		t.Fatal(err)
	}
	if answered() {
		t.Fatal("the cancelled call was answered")
	}
	n := 0
	for _, f := range b.Frames() {
		var r mcpclient.Response
		if json.Unmarshal(f, &r) == nil && string(r.ID) == `"r"` {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("id r was answered %d times; want once, for the call that reused it", n)
	}
}

// A 2026-07-28 client has no session to ping: its bridge knows a stopped
// leaseholder from the probes it sends while a request waits (and from the
// proof a new connection asks), so its calls are answered within busy
// grace + election bound too, its peer id kept where the lease was taken
// over (docs/protocol.md: liveness never depends on ping).
func TestAModernClientOfAStoppedLeaseholderIsAnsweredWithinTheBound(t *testing.T) {
	const grace, bound = time.Second, 5 * time.Second
	flags := []string{"--busy-grace", grace.String(), "--election-bound", bound.String(), "--probe-timeout", "500ms"}
	dir := checkout(t)
	a := shared(t, dir, flags...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := shared(t, dir, flags...)
	attached(t, m)
	openIn(t, m, modern, "codex-modern")
	meta := mcpclient.ModernMeta("codex-modern")
	var before boardView
	if isErr, text, err := m.CallToolWithMeta(ctx(t), "majordomus_peers", nil, meta, &before); err != nil || isErr {
		t.Fatalf("majordomus_peers: %s %v", text, err)
	}

	stop(t, a)
	stopped := time.Now()
	for _, name := range []string{"majordomus_repository", "majordomus_peers"} {
		var board boardView
		out := any(nil)
		if name == "majordomus_peers" {
			out = &board
		}
		if isErr, text, err := m.CallToolWithMeta(ctx(t), name, nil, meta, out); err != nil || isErr {
			t.Fatalf("%s after the leaseholder stopped: %s %v", name, text, err)
		}
		if name == "majordomus_peers" && board.Caller != before.Caller {
			t.Fatalf("the modern client is %s after the take-over, %s before", board.Caller, before.Caller)
		}
	}
	if took := time.Since(stopped); took > grace+bound {
		t.Fatalf("answered %s after the leaseholder stopped; the bound is %s", took, grace+bound)
	}
}
