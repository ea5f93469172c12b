//go:build unix

package scenarios

import (
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A 2026-07-28 client of a leaseholder that was stopped and taken over
// cancels a call it wrote while its process was stopped: continued, the
// process hands the client over to the current server, and the cancelled
// call is answered nothing (docs/design.md#failover), while the call
// written after it is answered.
func TestACallCancelledWhileItsLeaseholderIsStoppedIsAnsweredNothing(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, "--log-level", "debug")
	openIn(t, a, modern, "modern-agent")
	serverURL(t, a)
	stop(t, a)
	b := shared(t, dir, "--busy-grace", "1s", "--probe-timeout", "500ms")
	initialize(t, b, "codex")
	serverURL(t, b)
	// Written while a is stopped: they wait in its stdin.
	search := withMeta(map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "review"}}, "modern-agent")
	cancelled, err := a.Send("tools/call", search)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Notify("notifications/cancelled", map[string]any{"requestId": cancelled, "reason": "the user pressed Esc"}); err != nil {
		t.Fatal(err)
	}
	kept, err := a.Send("tools/call", search)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Await(ctx(t), kept); err != nil || r.Error != nil {
		t.Fatalf("the call after the cancelled one: %s %v (%v)", r.Result, r.Error, err)
	}
	for _, f := range a.Frames() {
		var r mcpclient.Response
		if json.Unmarshal(f, &r) == nil && string(r.ID) == string(cancelled) {
			t.Fatalf("the cancelled call was answered %s\n%s", f, strings.Join(a.Logs(), "\n"))
		}
	}
}
