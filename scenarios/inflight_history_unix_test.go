//go:build unix

package scenarios

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A bridged client's call written to its leaseholder just before the
// leaseholder froze, and answered by it once it resumed — by then another
// process had taken the lease over — is a call the client was answered:
// it is in the checkout's history (docs/design.md#nothing-is-lost).
func TestACallAnsweredByAResumedLeaseholderIsInTheHistory(t *testing.T) {
	t.Parallel()
	a, b, c, peer := frozenUnderTwo(t)
	search, err := b.Send("tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "review"}})
	if err != nil {
		t.Fatal(err)
	}
	peersOf(t, c) // c finds a silent, and takes the lease over
	if _, err := c.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Await(ctx(t), search); err != nil || r.Error != nil {
		t.Fatalf("the search: %v %v", err, r.Error)
	}
	var hist struct {
		Executions []struct{ Tool, Peer string }
	}
	if isErr, text, err := c.CallTool(ctx(t), "majordomus_executions", nil, &hist); err != nil || isErr {
		t.Fatalf("majordomus_executions: %s %v", text, err)
	}
	for _, x := range hist.Executions {
		if x.Tool == "majordomus_search" && x.Peer == peer {
			return
		}
	}
	t.Fatalf("%s's search was answered, but the checkout's history lacks it: %+v\n%s", peer, hist.Executions, strings.Join(b.Logs(), "\n"))
}

// A bridged client's batch of two tool calls, written to its leaseholder
// as it froze, and answered once another process had taken the lease over
// and the leaseholder was continued, is two calls the client was
// answered: both are in the checkout's history, once each (a batch is
// refused as its tool call is, and each of its calls keeps a key of its
// own).
func TestABatchAnsweredByAResumedLeaseholderIsInTheHistory(t *testing.T) {
	t.Parallel()
	a, b, c, peer := frozenUnderTwo(t)
	if err := b.SendLine(`[{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"review"}}},{"jsonrpc":"2.0","id":902,"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"commit"}}}]`); err != nil {
		t.Fatal(err)
	}
	peersOf(t, c) // c finds a silent: it, or b, takes the lease over
	if _, err := c.WaitLogAny(ctx(t), "took over as the shared server", "re-attached to the shared server"); err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	answer, err := b.WaitFrame(ctx(t), "the batch's answer", func(f []byte) bool {
		return strings.Contains(string(f), `"id":901`) && strings.Contains(string(f), `"id":902`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(answer), `"error"`) {
		t.Fatalf("the batch: %s", answer)
	}
	var hist struct {
		Executions []struct{ Tool, Peer string }
	}
	if isErr, text, err := c.CallTool(ctx(t), "majordomus_executions", nil, &hist); err != nil || isErr {
		t.Fatalf("majordomus_executions: %s %v", text, err)
	}
	n := 0
	for _, x := range hist.Executions {
		if x.Tool == "majordomus_search" && x.Peer == peer {
			n++
		}
	}
	if n == 2 {
		return
	}
	t.Fatalf("%s's two batched searches were answered (%s), but the checkout's history has %d of them: %+v\n%s", peer, answer, n, hist.Executions, strings.Join(a.Logs(), "\n"))
}

// A bridged client's batch that its leaseholder froze in the middle of,
// one of its calls run and kept, is sent again where the lease was taken
// over without the members a resend leaves out (here a cancel), and every
// call of it is still named as the member it was: the checkout's history
// keeps the call once, not once per server
// (docs/design.md#nothing-is-lost).
func TestABatchResentWithoutItsCancelKeepsEachCallOnce(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	short := []string{"--busy-grace", "1s", "--probe-timeout", "500ms", "--election-bound", "10s"}
	a := shared(t, dir, short...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir, short...)
	initialize(t, b, "codex")
	attached(t, b)
	peer := peersOf(t, b).Caller
	// the search, and the lists after it that keep the leaseholder busy
	// long after it has kept the search
	const lists = 1000
	members := []string{
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long-gone"}}`,
		`{"jsonrpc":"2.0","id":901,"method":"tools/call","params":{"name":"majordomus_search","arguments":{"query":"review"}}}`,
	}
	for i := range lists {
		members = append(members, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 1000+i))
	}
	if err := b.SendLine("[" + strings.Join(members, ",") + "]"); err != nil {
		t.Fatal(err)
	}
	waitFileLine(t, leasePath(dir)+".state", `"tool":"majordomus_search","peer":"`+peer+`"`)
	stop(t, a)
	for _, f := range b.Frames() {
		if strings.Contains(string(f), `"id":901`) {
			t.Fatal("the batch was answered before its leaseholder stopped: nothing was sent again")
		}
	}
	oneTakesOver(t, b)
	answer, err := b.WaitFrame(ctx(t), "the batch's answer", func(f []byte) bool {
		return strings.Contains(string(f), `"id":901`)
	})
	if err != nil {
		t.Fatal(err)
	}
	var answers []mcpclient.Response
	if err := json.Unmarshal(answer, &answers); err != nil || len(answers) != 1+lists {
		t.Fatalf("the batch's answer holds %d answers (%v), want %d", len(answers), err, 1+lists)
	}
	for _, r := range answers {
		if r.Error != nil {
			t.Fatalf("the batch: %s", r.Bytes())
		}
	}
	var hist struct {
		Executions []struct{ Tool, Peer string }
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_executions", nil, &hist); err != nil || isErr {
		t.Fatalf("majordomus_executions: %s %v", text, err)
	}
	n := 0
	for _, x := range hist.Executions {
		if x.Tool == "majordomus_search" && x.Peer == peer {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%s made one search, but the checkout's history has %d: %+v", peer, n, hist.Executions)
	}
}

// frozenUnderTwo serves a checkout to a, the leaseholder, then stops it
// (SIGSTOP), with b and c bridged to it: b, peer on the board, waits out a
// long silence on its calls; c gives the frozen server up at once.
func frozenUnderTwo(t *testing.T) (a, b, c *mcpclient.Process, peer string) {
	t.Helper()
	dir := checkout(t)
	short := []string{"--busy-grace", "1s", "--probe-timeout", "500ms", "--election-bound", "10s"}
	a = shared(t, dir, short...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b = shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m", "--probe-timeout", "1s", "--log-level", "debug")
	initialize(t, b, "codex")
	attached(t, b)
	c = shared(t, dir, short...)
	initialize(t, c, "gemini-cli")
	attached(t, c)
	if _, err := b.Call(ctx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	peer = peersOf(t, b).Caller
	stop(t, a)
	return a, b, c, peer
}
