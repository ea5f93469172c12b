//go:build unix

package scenarios

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"
)

// Starting is never held hostage by the lease
// (docs/design.md#sharing-heals, issue 21 point 5): with the leaseholder
// stopped (SIGSTOP), and a busy grace far longer than the test, a new
// client's initialize, lists and the layer's reads (resources, prompts,
// majordomus_list, _get, _search) are answered, byte for byte as the
// leaseholder answered them (R8), while the stopped server could not have
// answered them and nobody took it over; a call that needs the
// board waits for the election, which attaches once the leaseholder is
// continued, and the peer id the handshake gave is the one the shared board
// knows.
func TestAFrozenLeaseholderHoldsBackNoNewClientsHandshake(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	frames := len(a.Frames())
	editReviewPrompt(t, dir, "5. Is the README still true?\n") // the shared index's generation 2; a new process's is 1
	if _, err := a.WaitFrameAfter(ctx(t), "prompts/list_changed after the edit", frames, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/prompts/list_changed"`) // its prompts are the edit's now
	}); err != nil {
		t.Fatal(err)
	}
	want := answersIn(t, a, "2025-11-25", earlyProbes)
	stop(t, a)

	b := shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m", "--log-level", "debug")
	r, err := b.Call(ctx(t), "initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "gemini-cli", "version": "1.2.3"},
	})
	if err != nil || r.Error != nil {
		t.Fatalf("initialize: %v %+v", err, r.Error)
	}
	var init struct {
		Meta map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(r.Result, &init); err != nil {
		t.Fatal(err)
	}
	peer := init.Meta["io.majordomus/peer"]
	if peer == "" {
		t.Fatalf("no peer id in the handshake: %s", r.Result)
	}
	if err := b.Notify("notifications/initialized", nil); err != nil {
		t.Fatal(err)
	}
	for i, got := range answersIn(t, b, "2025-11-25", earlyProbes) {
		if got != want[i] {
			t.Errorf("%s %v, answered early:\nleaseholder %s\nearly       %s", earlyProbes[i].method, earlyProbes[i].params, want[i], got)
		}
	}
	if _, err := b.WaitLog(ctx(t), "answering this client's handshake and the layer's lists and reads in process while the election runs"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitLog(ctx(t), "waiting for the server of the lease's owner"); err != nil {
		t.Fatal(err)
	}
	if n := b.CountLogs(`"msg":"transition"`); n != 0 {
		t.Fatalf("the election ended (%d transitions) while its only server was stopped and its grace not over", n)
	}

	// the board is the shared one's, and so are what serves the client and
	// the generation of its index: their requests wait for the election
	id, err := b.Send("tools/call", map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	serverID, err := b.Send("resources/read", map[string]any{"uri": "majordomus://server"})
	if err != nil {
		t.Fatal(err)
	}
	repositoryID, err := b.Send("tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGCONT)
	res, err := b.Await(ctx(t), id)
	if err != nil || res.Error != nil {
		t.Fatalf("majordomus_peers: %v %+v", err, res.Error)
	}
	if res, err := b.Await(ctx(t), serverID); err != nil || res.Error != nil || !strings.Contains(string(res.Result), `\"role\":\"leaseholder\"`) {
		t.Fatalf("majordomus://server, read while the election ran, is not the shared server's: %v %+v %s", err, res.Error, res.Result)
	}
	if res, err := b.Await(ctx(t), repositoryID); err != nil || res.Error != nil || !strings.Contains(string(res.Result), `"generation":2`) {
		t.Fatalf("majordomus_repository, asked while the election ran, does not count the shared server's generations: %v %+v %s", err, res.Error, res.Result)
	}
	if _, err := b.WaitLog(ctx(t), `"msg":"transition"`, `"from":"electing","to":"attached"`); err != nil {
		t.Fatal(err)
	}
	var call struct {
		StructuredContent boardView `json:"structuredContent"`
	}
	if err := json.Unmarshal(res.Result, &call); err != nil {
		t.Fatal(err)
	}
	board := call.StructuredContent
	if board.Caller != peer {
		t.Fatalf("the client is %s on the shared board; its handshake said %s", board.Caller, peer)
	}
	names := map[string]bool{}
	for _, q := range board.Peers {
		if q.Attached {
			names[q.Client.Name] = true
		}
	}
	if !names["claude-code"] || !names["gemini-cli"] {
		t.Fatalf("the answer is not the shared board's: %+v", board)
	}
}

// `board` beside a frozen leaseholder says that its server does not answer
// now, not that none runs, which would invite a second one.
func TestBoardSaysAFrozenServerDoesNotAnswer(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	stop(t, a)
	code, stdout, stderr := runOnce(t, dir, "", "board", "--no-open", "--probe-timeout", "300ms")
	if code != 12 || stdout != "" || !strings.Contains(stderr, "does not answer now (busy") {
		t.Fatalf("board beside a frozen server: exit %d, %q\n%s", code, stdout, stderr)
	}
}
