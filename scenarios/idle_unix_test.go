//go:build unix

package scenarios

import (
	"strings"
	"syscall"
	"testing"
)

// S13 with the checkout's own timings: the owner leaves while a bridged
// peer is attached. The peer's heartbeat keeps its session past the idle
// timeout while it lives (a direct session opened after it last spoke
// expires first); stopped, it sends nothing, its session expires at the
// manifest's idle timeout (not the default 90 s), and the server ends with
// it, giving the lease back.
func TestAServerWhoseOwnerLeftEndsAtItsIdleTimeoutWhenItsPeerFallsSilent(t *testing.T) {
	t.Parallel()
	dir := checkoutTimed(t, "  session_idle_timeout_seconds: 2\n  bridge_heartbeat_seconds: 0.5\n")
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	continued := false
	t.Cleanup(func() {
		if !continued {
			b.Signal(syscall.SIGCONT)
		}
	})

	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), `"to":"owner-left"`); err != nil {
		t.Fatal(err)
	}
	server := connect(t, dir)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`)
	status, headers, body := httpDo(t, "POST", server.URL, init, server.with(nil))
	direct := headers.Get("Mcp-Session-Id")
	if status != 200 || direct == "" {
		t.Fatalf("initialize: %d %s", status, body)
	}
	line, err := a.WaitLog(ctx(t), "http session closed", `"reason":"idle"`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, direct) {
		t.Fatalf("the live peer's session expired first, between its beats: %s", line)
	}
	if r, err := b.Call(ctx(t), "tools/list", nil); err != nil || r.Error != nil {
		t.Fatalf("the live peer is not served: %+v %v", r, err)
	}

	b.Signal(syscall.SIGSTOP)
	if err := a.WaitLogs(ctx(t), 2, "http session closed", `"reason":"idle"`); err != nil {
		t.Fatal(err)
	}
	exitsWith(t, a, 0)
	noLease(t, dir)

	b.Signal(syscall.SIGCONT)
	continued = true
	b.CloseStdin()
	exitsWith(t, b, 0)
}
