package scenarios

// Ports, serve, a non-loopback bind (R7), a storm of clients, transparency
// (R8), and the rule that nothing outside .ai/local/ is ever written.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// S7: a taken port falls back to a free one; serve defers to the running
// server, says where, and exits 0.
func TestATakenPortFallsBackAndServeDefers(t *testing.T) {
	dir := checkout(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	port := held.Addr().(*net.TCPAddr).Port
	a := start(t, dir, "--http-port", fmt.Sprint(port))
	if _, err := a.WaitLog(ctx(t), "taking a free port", fmt.Sprintf("cannot bind 127.0.0.1:%d", port)); err != nil {
		t.Fatal(err)
	}
	url := serverURL(t, a)
	if strings.HasSuffix(url, fmt.Sprintf(":%d", port)) {
		t.Fatalf("it claims the taken port: %s", url)
	}
	code, stdout, stderr := runOnce(t, dir, "", "serve", "--http-port", "0")
	if code != 0 || stdout != "" || !strings.Contains(stderr, "already running at "+url) || strings.Contains(stderr, "listening on") {
		t.Fatalf("serve: exit %d, stdout %q\n%s", code, stdout, stderr)
	}
}

// S15: a bind to an address that is not loopback is served, with a warning
// naming what it exposes, and shared.
func TestANonLoopbackBindIsServedWithAWarning(t *testing.T) {
	dir := checkout(t)
	a := start(t, dir, "--http-host", "0.0.0.0", "--http-port", "0")
	line, err := a.WaitLog(ctx(t), "not a loopback address")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "0.0.0.0:") || !strings.Contains(line, "bind 127.0.0.1") || !strings.Contains(line, `"level":"warn"`) {
		t.Fatalf("the warning: %s", line)
	}
	// The lease names it as a local client reaches it, and one attaches.
	url := serverURL(t, a)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url %s", url)
	}
	b := shared(t, dir)
	initialize(t, b, "codex")
	attached(t, b, url)
}

// S16: 16 clients released at once: exactly one leaseholder, 15 attached,
// one board of 16, no warnings, no lease left after all have exited, and
// nothing written outside .ai/local/ (S18).
func TestAStormOfClientsConvergesOnOneServer(t *testing.T) {
	const storm = 16
	dir := checkout(t)
	clients := make([]*mcpclient.Process, storm)
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = shared(t, dir)
	}
	ids := make([]string, storm)
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, err := c.Initialize(ctx(t), fmt.Sprintf("agent-%d", i), "2025-11-25")
			if err != nil {
				t.Errorf("client %d: %v", i, err)
				return
			}
			if _, after, ok := strings.Cut(inst.Instructions, "You are peer "); ok {
				ids[i], _, _ = strings.Cut(after, " ")
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	leaseholders, bridges, url := 0, 0, ""
	for _, c := range clients {
		// a client answered while its election ran (the owner binding) is seated after
		line, err := c.WaitLog(ctx(t), `"msg":"transition"`, `"from":"electing"`)
		seated := "shared server listening on"
		if strings.Contains(line, `"to":"attached"`) {
			seated = "bridging this stdio session"
		}
		if err == nil {
			_, err = c.WaitLog(ctx(t), seated)
		}
		if err != nil {
			t.Fatal(err)
		}
		if c.CountLogs("shared server listening on") == 1 {
			leaseholders++
			url = serverURL(t, c)
		}
		if c.CountLogs("bridging this stdio session") == 1 {
			bridges++
		}
		if n := c.CountLogs(`"level":"warn"`); n != 0 {
			var warned []string
			for _, l := range c.Logs() {
				if strings.Contains(l, `"level":"warn"`) {
					warned = append(warned, l)
				}
			}
			t.Errorf("a client warned:\n%s\nall its logs:\n%s", strings.Join(warned, "\n"), strings.Join(c.Logs(), "\n"))
		}
	}
	if leaseholders != 1 || bridges != storm-1 {
		t.Fatalf("%d leaseholders and %d bridges, want 1 and %d", leaseholders, bridges, storm-1)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	if len(seen) != storm {
		t.Fatalf("peer ids %v: want %d distinct", ids, storm)
	}
	for _, c := range clients {
		if b := peersOf(t, c); b.Count != storm {
			t.Fatalf("a board of %d, want %d", b.Count, storm)
		}
	}
	if readLease(t, dir)["url"] != url {
		t.Fatal("the lease does not name the one server")
	}
	for _, c := range clients {
		c.CloseStdin()
	}
	for _, c := range clients {
		exitsWith(t, c, 0)
	}
	noLease(t, dir)
}

// S17: the probes of docs/design.md#server-and-bridge answer byte for byte
// the same through the leaseholder's own session, a bridged session, and a
// restarted server: tools, resources, prompts and completions, and the
// errors of prompts.
func TestBridgedRestartedAndLocalSessionsAnswerTheSameBytes(t *testing.T) {
	dir := checkout(t)
	review := func(args map[string]any) map[string]any { return map[string]any{"name": "review", "arguments": args} }
	probes := []struct {
		method string
		params any
		fails  bool // answered with a JSON-RPC error
	}{
		{"tools/list", nil, false},
		{"resources/list", nil, false},
		{"resources/read", map[string]any{"uri": "majordomus://rule/project.small-commits@1"}, false},
		{"resources/read", map[string]any{"uri": "majordomus://repository"}, false},
		{"tools/call", map[string]any{"name": "majordomus_list", "arguments": map[string]any{}}, false},
		{"tools/call", map[string]any{"name": "majordomus_get", "arguments": map[string]any{"uri": "majordomus://adr/adr.0001@1"}}, false},
		{"tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}, false},
		{"prompts/list", nil, false},
		{"prompts/get", review(map[string]any{"change": "HEAD~3..HEAD {{focus}}", "focus": "tests"}), false},
		{"prompts/get", review(map[string]any{"focus": "tests"}), true},
		{"prompts/get", map[string]any{"name": "nope"}, true},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "review"},
			"argument": map[string]any{"name": "focus", "value": "d"}}, false},
	}
	answers := func(call func(method string, params any) (mcpclient.Response, error)) []string {
		var out []string
		for _, pr := range probes {
			r, err := call(pr.method, pr.params)
			if err != nil || (r.Error != nil) != pr.fails {
				t.Fatalf("%s %v: %v %v", pr.method, pr.params, err, r.Error)
			}
			out = append(out, r.Bytes())
		}
		return out
	}
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir)
	initialize(t, b, "codex")
	server := connect(t, dir)
	direct := plainSession{t: t, c: server, sid: openPlainSession(t, server)}
	local, bridged, plain := answers(stdio(t, a)), answers(stdio(t, b)), answers(direct.call)
	direct.end()
	b.CloseStdin()
	exitsWith(t, b, 0)
	a.CloseStdin()
	exitsWith(t, a, 0)

	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	serverURL(t, c)
	restarted := answers(stdio(t, c))
	for i := range probes {
		if local[i] != bridged[i] || local[i] != restarted[i] || local[i] != plain[i] {
			t.Errorf("%s %v differs:\nlocal     %s\nbridged   %s\nrestarted %s\nplain HTTP %s",
				probes[i].method, probes[i].params, local[i], bridged[i], restarted[i], plain[i])
		}
	}
}

// stdio is a process's client's call.
func stdio(t *testing.T, p *mcpclient.Process) func(string, any) (mcpclient.Response, error) {
	return func(method string, params any) (mcpclient.Response, error) { return p.Call(ctx(t), method, params) }
}

// snapshot digests every file of a checkout outside .ai/local/.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == filepath.Join(".ai", "local") {
			return filepath.SkipDir
		}
		info, _ := d.Info()
		if d.IsDir() {
			fmt.Fprintf(h, "%s %o\n", rel, info.Mode()) // an empty one made counts too
			return nil
		}
		data, _ := os.ReadFile(path)
		fmt.Fprintf(h, "%s %o %d\n", rel, info.Mode(), len(data))
		h.Write(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MAJORDOMUS_MCP_CPUPROFILE makes a process write a CPU profile of its
// whole life: one gzip-compressed pprof file named after its pid.
func TestAProcessWritesTheCPUProfileItIsAskedFor(t *testing.T) {
	dir := checkout(t)
	profiles := t.TempDir()
	p := startEnv(t, dir, append(os.Environ(), "MAJORDOMUS_MCP_CPUPROFILE="+profiles), "--standalone")
	initialize(t, p, "claude-code")
	pid := p.Cmd.Process.Pid
	p.CloseStdin()
	exitsWith(t, p, 0)
	data, err := os.ReadFile(filepath.Join(profiles, fmt.Sprintf("cpu-%d.pprof", pid)))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Fatalf("the profile is not a gzip-compressed pprof file (%d bytes)", len(data))
	}
}

// A log file that cannot be opened costs no client its server (issue 14):
// the process says so on stderr and serves.
func TestAnUnopenableLogFileStillServes(t *testing.T) {
	dir := checkout(t)
	notDir := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p := shared(t, dir, "--log-file", filepath.Join(notDir, "majordomus.log"))
	if _, err := p.WaitLog(ctx(t), "cannot open the log file", "logging to stderr only"); err != nil {
		t.Fatal(err)
	}
	initialize(t, p, "codex")
	p.CloseStdin()
	exitsWith(t, p, 0)
}
