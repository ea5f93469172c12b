package scenarios

import (
	"strings"
	"testing"
)

// A bridged 2026-07-28 client that cancels a call just after its answer
// came (the user pressed Esc as it arrived, a race every host has) sends
// its server nothing it refuses: the cancel names a request already
// answered, which in process is ignored, and over HTTP closes no stream.
func TestALateCancelOfABridgedModernClientIsNoRejectedMessage(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := modernBridged(t, dir)
	search := withMeta(map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "review"}}, "modern-agent")
	id, err := m.Send("tools/call", search)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := m.Await(ctx(t), id); err != nil || r.Error != nil {
		t.Fatalf("the call: %s %v (%v)", r.Result, r.Error, err)
	}
	if err := m.Notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "the user pressed Esc"}); err != nil {
		t.Fatal(err)
	}
	if r, err := m.Call(ctx(t), "tools/call", search); err != nil || r.Error != nil {
		t.Fatalf("the call after the late cancel: %s %v (%v)", r.Result, r.Error, err)
	}
	m.CloseStdin()
	exitsWith(t, m, 0)
	for _, line := range m.Logs() {
		if strings.Contains(line, `"level":"warn"`) || strings.Contains(line, `"level":"error"`) {
			t.Errorf("a late cancel was logged: %s", line)
		}
	}
}
