package scenarios

// A server whose owner left ends with its last session (R5); a server
// whose lease was taken over says so and takes on nobody new (R6); serve
// runs until a signal. Signals themselves: signals_unix_test.go (R4).

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// serve runs the shared server for others until a signal, as its log line
// says: a session that opens and ends does not end it, SIGTERM does, and
// removes the lease.
func TestServeRunsUntilASignal(t *testing.T) {
	dir := checkout(t)
	s := start(t, dir, "serve", "--http-port", "0", "--log-level", "debug")
	if _, err := s.WaitLog(ctx(t), "shared server listening on", "it serves until a signal"); err != nil {
		t.Fatal(err)
	}
	server := connect(t, dir)
	sid := openPlainSession(t, server)
	if _, err := s.WaitLog(ctx(t), `"msg":"sessions"`, `"sessions":1`); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := httpDo(t, "DELETE", server.URL, nil, server.with(map[string]string{"Mcp-Session-Id": sid})); status != 200 {
		t.Fatalf("DELETE: %d", status)
	}
	if _, err := s.WaitLog(ctx(t), `"msg":"sessions"`, `"sessions":0`); err != nil {
		t.Fatal(err)
	}
	if id := identity(t, server); id["leaseholder"] != true {
		t.Fatalf("serve stopped serving when its last session ended: %v", id)
	}
	s.Signal(syscall.SIGTERM)
	if exit, err := s.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
	noLease(t, dir)
}

// S13: the owner leaves; the server keeps serving its bridged peer and ends
// after the peer's DELETE, releasing the lease.
func TestTheServerOutlivesItsOwnerUntilTheLastSessionEnds(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir)
	initialize(t, b, "gemini-cli")

	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), `"to":"owner-left"`); err != nil {
		t.Fatal(err)
	}
	var tools struct{ Tools []any }
	r, err := b.Call(ctx(t), "tools/list", nil)
	if err != nil || json.Unmarshal(r.Result, &tools) != nil || len(tools.Tools) != 9 {
		t.Fatalf("the peer is not served after the owner left: %+v %v", r, err)
	}
	if board := peersOf(t, b); board.Count != 1 || board.Peers[len(board.Peers)-1].Client.Name != "gemini-cli" {
		t.Fatalf("board: %+v", board)
	}
	b.CloseStdin()
	exitsWith(t, b, 0)
	exitsWith(t, a, 0)
	noLease(t, dir)
}

// S13: a peer that never says goodbye (killed -9) does not keep a server
// whose owner left: its session ends with its connection, or at the idle
// timeout at the latest.
func TestAPeerKilledHardDoesNotKeepTheServerAlive(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir, "--log-level", "debug")
	initialize(t, b, "codex")
	if _, err := b.WaitLog(ctx(t), "stream open"); err != nil { // the bridge holds its event stream
		t.Fatal(err)
	}
	b.Signal(syscall.SIGKILL)
	b.Wait(ctx(t))
	// its session ends with its connection, long before the 90 s idle timeout
	if _, err := a.WaitLog(ctx(t), "http session closed", "stream-dropped"); err != nil {
		t.Fatal(err)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
	noLease(t, dir)
}

// S13: a direct HTTP session that never says goodbye expires at the idle
// timeout, and the server whose owner left ends then.
func TestAnIdleSessionExpires(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, "--idle-timeout", "2s", "--heartbeat", "1s")
	initialize(t, a, "claude-code")
	serverURL(t, a)
	server := connect(t, dir)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`)
	if status, _, body := httpDo(t, "POST", server.URL, init, server.with(nil)); status != 200 {
		t.Fatalf("initialize: %d %s", status, body)
	}
	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), "http session closed", "idle"); err != nil {
		t.Fatal(err)
	}
	exitsWith(t, a, 0)
	noLease(t, dir)
}

// S14: the lease is overwritten while a server runs whose own client has
// left: it says so within a second, refuses new sessions with where the
// current server is, serves the session it had, and a SIGTERM then leaves
// the new lease alone. (A server whose client is still there hands it
// over at once: TestALeaseholderHandsItsClientOverWhileAPlainSessionRemains.)
func TestAServerWhoseLeaseWasTakenOverSaysSo(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	server := connect(t, dir)
	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct","version":"1"}}}`)
	_, headers, _ := httpDo(t, "POST", server.URL, init, server.with(nil))
	session := headers.Get("Mcp-Session-Id")
	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), `"to":"owner-left"`); err != nil {
		t.Fatal(err)
	}

	// Another process takes the lease over (written as the registry writes it: whole, by rename).
	other := `{"schema":"majordomus-mcp-lease/v1","pid":1,"instance":"someone-else","url":"http://127.0.0.1:1"}`
	tmp := leasePath(dir) + ".tmp"
	os.WriteFile(tmp, []byte(other), 0o600)
	os.Rename(tmp, leasePath(dir))

	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	if id := identity(t, server); id["leaseholder"] != false {
		t.Fatalf("identity after the loss: %v", id)
	}
	status, _, body := httpDo(t, "POST", server.URL, init, server.with(nil))
	if status != 200 || !strings.Contains(string(body), "lease_lost") || !strings.Contains(string(body), "http://127.0.0.1:1") {
		t.Fatalf("a new initialize: %d %s", status, body)
	}
	status, _, body = httpDo(t, "POST", server.URL, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`),
		server.with(map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}))
	if status != 200 || !strings.Contains(string(body), `"result":{}`) {
		t.Fatalf("the existing session: %d %s", status, body)
	}
	status, _, body = httpDo(t, "POST", server.URL, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"majordomus_server","arguments":{}}}`),
		server.with(map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}))
	if status != 200 || strings.Contains(string(body), `\"leaseholder\":true`) || !strings.Contains(string(body), "is not the checkout's server") {
		t.Fatalf("majordomus_server after the loss: %d %s", status, body)
	}

	a.Signal(syscall.SIGTERM)
	exit, _ := a.Wait(ctx(t))
	if exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v", exit)
	}
	if b, _ := os.ReadFile(leasePath(dir)); string(b) != other {
		t.Fatalf("the new lease was touched: %q", b)
	}
}

// A host that ends its server with stdin's end and then SIGTERM (Codex)
// is obeyed even while the process waits for a lease-lost server of its
// to drain: that server stops at once, and the process dies of the signal.
func TestASignalEndsAProcessThatWaitsForItsOldServer(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	old := connect(t, dir)
	openPlainSession(t, old) // never ended: it would keep the old server until the idle timeout
	if err := os.Remove(leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	a.CloseStdin()
	if _, err := a.WaitLog(ctx(t), `"to":"exited"`); err != nil {
		t.Fatal(err)
	}
	a.Signal(syscall.SIGTERM)
	if exit, err := a.Wait(ctx(t)); err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v, want death by SIGTERM", exit, err)
	}
	if !strings.Contains(strings.Join(a.Logs(), "\n"), "shared server stopped with its last session") {
		t.Fatal("the old server was not stopped before the process ended")
	}
}

// The client's departure is noticed through its parent's death too: a host
// killed hard leaves its server reparented with stdin still open; the
// leaseholder then ends (no session left) and releases the lease.
func TestTheParentsDeathIsTheClientLeaving(t *testing.T) {
	dir := checkout(t)
	// The shell is the host: majordomus-mcp is its child, reading the shell's stdin.
	cmd := exec.Command("sh", "-c", `exec 3<&0; "$0" --http-port 0 0<&3 & wait`, bin)
	cmd.Dir = dir
	host, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Kill(context.Background()) })
	initialize(t, host, "claude-code")
	serverURL(t, host)
	host.Signal(syscall.SIGKILL) // the shell dies; its child keeps stdin open
	if _, err := host.WaitLog(ctx(t), "the client left", "parent process"); err != nil {
		t.Fatal(err)
	}
	if _, err := host.WaitLog(ctx(t), "shared server stopped"); err != nil {
		t.Fatal(err)
	}
	host.Wait(ctx(t)) // the server's end closes the pipes it inherited
	noLease(t, dir)
}
