//go:build unix

package scenarios

import (
	"strings"
	"syscall"
	"testing"
)

// A bridged client's call written to its leaseholder just before the
// leaseholder froze, and answered by it once it resumed — by then another
// process had taken the lease over — is a call the client was answered:
// it is in the checkout's history (docs/design.md#nothing-is-lost).
func TestACallAnsweredByAResumedLeaseholderIsInTheHistory(t *testing.T) {
	dir := checkout(t)
	short := []string{"--busy-grace", "1s", "--probe-timeout", "500ms", "--election-bound", "10s"}
	a := shared(t, dir, short...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	// b waits out a long silence on its call; c gives the frozen server up
	b := shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m", "--probe-timeout", "1s", "--log-level", "debug")
	initialize(t, b, "codex")
	attached(t, b)
	c := shared(t, dir, short...)
	initialize(t, c, "gemini-cli")
	attached(t, c)
	if _, err := b.Call(ctx(t), "tools/list", nil); err != nil {
		t.Fatal(err)
	}
	peer := peersOf(t, b).Caller

	stop(t, a)
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
