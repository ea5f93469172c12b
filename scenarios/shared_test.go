package scenarios

// One shared server per checkout: the first client serves, later ones
// attach (R1, R8), and /mcp spoken directly over HTTP.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// S1: the second client bridges; the board shows both; the instructions
// name the URL; exactly one process logs that it listens.
func TestOneServerPerCheckout(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	instA := initialize(t, a, "claude-code")
	url := serverURL(t, a)
	// On a loaded machine the election may outlast the wait for an early
	// answer: then the handshake is answered in process, before any shared
	// server serves it, and names no URL.
	early := a.CountLogs("answering this client's handshake") > 0
	if !strings.Contains(instA, url) && !early || !strings.Contains(instA, "You are peer p1") {
		t.Fatalf("A's instructions:\n%s", instA)
	}
	lease := readLease(t, dir)
	if lease["url"] != url || lease["schema"] != "majordomus-mcp-lease/v1" || lease["root"] == nil {
		t.Fatalf("lease: %v", lease)
	}

	b := shared(t, dir)
	instB := initialize(t, b, "codex")
	attached(t, b, url)
	if !strings.Contains(instB, "You are peer p2") || !strings.Contains(instB, `p1 "claude-code"`) || !strings.Contains(instB, url) {
		t.Fatalf("B's instructions:\n%s", instB)
	}
	board := peersOf(t, a)
	if board.Count != 2 || board.Caller != "p1" || board.Peers[1].Client.Name != "codex" || board.Peers[1].Transport != "http" {
		t.Fatalf("A's board: %+v", board)
	}
	if bb := peersOf(t, b); bb.Count != 2 || bb.Caller != "p2" {
		t.Fatalf("B's board: %+v", bb)
	}
	if n := b.CountLogs("listening on"); n != 0 {
		t.Fatalf("the bridge logged that it listens")
	}

	b.CloseStdin()
	exitsWith(t, b, 0)
	if board := peersOf(t, a); board.Count != 1 {
		t.Fatalf("after B left, A's board: %+v", board)
	}
	a.CloseStdin()
	exitsWith(t, a, 0)
	noLease(t, dir)
	assertOnlyFrames(t, a.Frames())
	assertOnlyFrames(t, b.Frames())
}

// S2: /mcp spoken directly: every malformed request gets a 4xx with a JSON
// error body, and the server keeps serving.
func TestMCPOverHTTPRefusesMalformedTrafficAndKeepsServing(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	server := connect(t, dir)
	mcpURL := server.URL

	init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"direct-http","version":"1"}}}`)
	status, headers, body := httpDo(t, "POST", mcpURL, init, server.with(nil))
	session := headers.Get("Mcp-Session-Id")
	if status != 200 || session == "" || !strings.Contains(string(body), "You are peer p2") {
		t.Fatalf("initialize over HTTP: %d %q %s", status, session, body)
	}
	withSession := map[string]string{"Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-11-25"}

	refusals := []struct {
		name    string
		method  string
		body    []byte
		headers map[string]string
		status  int
		code    string
	}{
		{"no session", "POST", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), nil, 400, "session_required"},
		{"unknown session", "POST", []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), map[string]string{"Mcp-Session-Id": "mcp-session-nope"}, 404, "session_not_found"},
		{"not JSON", "POST", []byte(`not json`), withSession, 400, "invalid_json"},
		{"PUT", "PUT", nil, nil, 405, "method_not_allowed"},
		{"2 MiB", "POST", []byte(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`), withSession, 413, "too_large"},
		{"foreign origin", "POST", []byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}`), map[string]string{"Mcp-Session-Id": session, "Origin": "http://evil.example"}, 403, "forbidden"},
		{"no token", "POST", init, map[string]string{"Authorization": ""}, 401, "unauthorized"},
		{"another token", "POST", []byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}`), map[string]string{"Mcp-Session-Id": session, "Authorization": "Bearer 0123"}, 401, "unauthorized"},
	}
	for _, r := range refusals {
		status, _, body := httpDo(t, r.method, mcpURL, r.body, server.with(r.headers))
		var e struct {
			Error struct{ Code, Message string }
		}
		if status != r.status || json.Unmarshal(body, &e) != nil || e.Error.Code != r.code {
			t.Errorf("%s: %d %s, want %d with a JSON error %q", r.name, status, body, r.status, r.code)
		}
	}

	status, _, body = httpDo(t, "POST", mcpURL, []byte(`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"no/such"}]`), server.with(withSession))
	if status != 200 || !strings.Contains(string(body), `"id":5`) || !strings.Contains(string(body), `-32601`) {
		t.Fatalf("a batch: %d %s", status, body)
	}
	if board := peersOf(t, a); board.Count != 2 || board.Peers[1].Client.Name != "direct-http" {
		t.Fatalf("board with a direct HTTP peer: %+v", board)
	}
	status, _, _ = httpDo(t, "DELETE", mcpURL, nil, server.with(withSession))
	if status != 200 && status != 204 {
		t.Fatalf("DELETE: %d", status)
	}
	if status, _, _ := httpDo(t, "POST", mcpURL, []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`), server.with(withSession)); status != 404 {
		t.Fatalf("after DELETE the session answers %d, want 404", status)
	}
	if board := peersOf(t, a); board.Count != 1 {
		t.Fatalf("after DELETE the board: %+v", board)
	}
	// it still serves
	if id := identity(t, server); id["leaseholder"] != true || id["name"] != "majordomus" {
		t.Fatalf("identity: %v", id)
	}
}

// A change to the layer reaches every session, bridged ones included: a
// changed prompt changes the list of prompts too.
func TestAChangeToTheLayerReachesBridgedSessions(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	for _, p := range []*mcpclient.Process{a, b} {
		for _, list := range []string{"resources", "prompts"} {
			if _, err := p.WaitFrame(ctx(t), list+"/list_changed", func(f []byte) bool {
				return strings.Contains(string(f), `"method":"notifications/`+list+`/list_changed"`)
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var repo struct{ Generation int }
	b.CallTool(ctx(t), "majordomus_repository", nil, &repo)
	if repo.Generation != 2 {
		t.Fatalf("the bridged session sees generation %d, want 2", repo.Generation)
	}
}

// status reports the checkout's server, read-only; graph prints the machine.
func TestStatusAndGraph(t *testing.T) {
	dir := checkout(t)
	// The checkout is called what its manifest says, not after its directory.
	manifest := filepath.Join(dir, ".ai/manifest.yaml")
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(manifest, []byte(strings.Replace(string(raw), "name: example", "name: payments-api", 1)), 0o644)
	layerEdited(t, dir)
	code, stdout, _ := runOnce(t, dir, "", "status")
	if code != 0 || !strings.Contains(stdout, `"class": "absent"`) || !strings.Contains(stdout, `"checkout": "payments-api"`) {
		t.Fatalf("status without a server: %d\n%s", code, stdout)
	}
	noLease(t, dir)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	code, stdout, _ = runOnce(t, dir, "", "status")
	if code != 0 || !strings.Contains(stdout, `"class": "live"`) || !strings.Contains(stdout, `"leaseholder": true`) || !strings.Contains(stdout, url) {
		t.Fatalf("status with a server: %d\n%s", code, stdout)
	}
	// It says how a direct HTTP client connects, and never the secret:
	// the header it shows opens a session.
	if key, _ := readLease(t, dir)["secret"].(string); key == "" || strings.Contains(stdout, key) {
		t.Fatalf("status shows the lease's secret, or the lease has none:\n%s", stdout)
	}
	server := connect(t, dir)
	if server.URL != url+"/mcp" || !strings.HasPrefix(server.Header, "Authorization: Bearer ") {
		t.Fatalf("status says to connect to %+v", server)
	}
	openPlainSession(t, server)
	// It shows the server's sessions — the same number majordomus_server
	// says: its own client's and the HTTP one — and the peers on its
	// board, their names as data.
	_, stdout, _ = runOnce(t, dir, "", "status")
	var report struct {
		Server struct {
			Sessions     int
			HTTPSessions int `json:"http_sessions"`
			Peers        struct {
				Count int
				Peers []struct{ ID, Client, Transport string }
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	var own struct {
		Sessions     int
		HTTPSessions int `json:"http_sessions"`
	}
	if isErr, text, err := a.CallTool(ctx(t), "majordomus_server", nil, &own); err != nil || isErr {
		t.Fatalf("majordomus_server: %s %v", text, err)
	}
	if own.Sessions != report.Server.Sessions || own.HTTPSessions != report.Server.HTTPSessions {
		t.Fatalf("majordomus_server counts %+v sessions, status %d (%d over HTTP)", own, report.Server.Sessions, report.Server.HTTPSessions)
	}
	peers := report.Server.Peers
	if report.Server.Sessions != 2 || report.Server.HTTPSessions != 1 || peers.Count != 2 || len(peers.Peers) != 2 ||
		peers.Peers[0].Client != "claude-code" || peers.Peers[0].Transport != "stdio" || peers.Peers[1].Client != "plain-http" || peers.Peers[1].ID == "" {
		t.Fatalf("status does not show the sessions and the board:\n%s", stdout)
	}
	// What a client wrote reaches the reader's terminal as data: a bidi
	// override and a C1 CSI (which drives some terminals) are escaped.
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"evil\u202eedoc\u009b31m","version":"1"}}}`)
	if status, _, answer := httpDo(t, http.MethodPost, server.URL, body, server.with(nil)); status != http.StatusOK {
		t.Fatalf("opening a session: %d %s", status, answer)
	}
	_, stdout, _ = runOnce(t, dir, "", "status")
	if strings.ContainsAny(stdout, "\u202e\u009b") || !strings.Contains(stdout, `"client": "evil\u202eedoc\u009b31m"`) {
		t.Fatalf("status prints what a client wrote unescaped:\n%q", stdout)
	}
	// version prints the startup revision fleet reports for the server.
	_, inventory, _ := runOnce(t, dir, "", "fleet")
	var fleet struct {
		StartupRevisions []string `json:"startup_revisions"`
	}
	if err := json.Unmarshal([]byte(inventory), &fleet); err != nil || len(fleet.StartupRevisions) != 1 {
		t.Fatalf("fleet: %v\n%s", err, inventory)
	}
	if code, version, _ := runOnce(t, dir, "", "version"); code != 0 || !strings.Contains(version, "(startup revision "+fleet.StartupRevisions[0]+")") {
		t.Fatalf("version printed %q; fleet reports %q", version, fleet.StartupRevisions)
	}
	for format, want := range map[string]string{"dot": "digraph", "mermaid": "stateDiagram-v2", "json": `"rules"`} {
		code, stdout, _ := runOnce(t, dir, "", "graph", "--format", format)
		if code != 0 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "lease-lost") {
			t.Errorf("graph --format %s: %d\n%.200s", format, code, stdout)
		}
	}
}
