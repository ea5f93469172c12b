package scenarios

// Scenarios of one client served on stdio (--standalone): the MCP surface
// over real pipes, the exit codes of the layer's contract, the watch.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/example"
)

// A whole session over real pipes, for each protocol revision hosts speak.
func TestStandaloneServesAWholeSession(t *testing.T) {
	for _, protocol := range []string{"2025-06-18", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			dir := checkout(t)
			p := start(t, dir, "--standalone")
			c := ctx(t)

			init, err := p.Initialize(c, "claude-code", protocol)
			if err != nil {
				t.Fatal(err)
			}
			if init.ProtocolVersion != protocol || init.ServerInfo.Name != "majordomus" {
				t.Fatalf("initialize: %+v", init)
			}
			if !strings.Contains(init.Instructions, "You are peer p1") || strings.Contains(init.Instructions, "http://") {
				t.Fatalf("instructions of a client served alone:\n%s", init.Instructions)
			}
			for _, capability := range []string{"tools", "resources", "logging"} {
				if _, ok := init.Capabilities[capability]; !ok {
					t.Errorf("capability %s missing: %v", capability, init.Capabilities)
				}
			}

			if r, err := p.Call(c, "ping", nil); err != nil || string(r.Result) != "{}" {
				t.Fatalf("ping: %+v %v", r, err)
			}
			r, err := p.Call(c, "no/such/method", nil)
			if err != nil || r.Error == nil || r.Error.Code != -32601 {
				t.Fatalf("an unknown method: %+v %v", r, err)
			}
			r, _ = p.Call(c, "tools/list", nil)
			var tools struct{ Tools []struct{ Name string } }
			json.Unmarshal(r.Result, &tools)
			if len(tools.Tools) != 9 {
				t.Fatalf("tools/list: %s", r.Result)
			}

			var repo struct {
				State      string
				Generation int
				Objects    int
			}
			if isErr, text, err := p.CallTool(c, "majordomus_repository", nil, &repo); err != nil || isErr {
				t.Fatalf("majordomus_repository: %s %v", text, err)
			}
			if repo.State != "ok" || repo.Generation != 1 || repo.Objects != 6 {
				t.Fatalf("repository: %+v", repo)
			}
			var board struct {
				Count int
				Peers []struct{ Client struct{ Name string } }
			}
			p.CallTool(c, "majordomus_peers", nil, &board)
			if board.Count != 1 || board.Peers[0].Client.Name != "claude-code" {
				t.Fatalf("a board of one: %+v", board)
			}
			if isErr, text, _ := p.CallTool(c, "majordomus_announce", map[string]any{"intent": ""}, nil); !isErr || !strings.Contains(text, "intent") {
				t.Fatalf("a blank intent: %v %s", isErr, text)
			}

			r, _ = p.Call(c, "resources/read", map[string]any{"uri": "majordomus://rule/project.small-commits@1"})
			if r.Error != nil || !strings.Contains(string(r.Result), `small-commits`) {
				t.Fatalf("resources/read of an object: %+v", r)
			}
			r, _ = p.Call(c, "resources/read", map[string]any{"uri": "majordomus://rule/nope@1"})
			if r.Error == nil || r.Error.Code != -32002 {
				t.Fatalf("resources/read of an unknown URI: %+v", r)
			}

			p.CloseStdin()
			exit, err := p.Wait(c)
			if err != nil || exit.Code != 0 {
				t.Fatalf("exit %+v %v", exit, err)
			}
			assertOnlyFrames(t, p.Frames())
			if n := p.CountLogs("listening on"); n != 0 {
				t.Fatalf("--standalone bound a port")
			}
			if _, err := os.Stat(filepath.Join(dir, ".ai/local")); !os.IsNotExist(err) {
				t.Fatalf("--standalone wrote under .ai/local: %v", err)
			}
		})
	}
}

// Malformed input is answered and the session goes on; a batch is answered
// as a batch; before initialize, ping is answered and any other request is
// told to initialize first; nothing but frames reaches stdout.
func TestBadInputIsAnsweredAndTheSessionGoesOn(t *testing.T) {
	dir := checkout(t)
	input := strings.Join([]string{
		"{not json",
		"\xff\xfe",
		"",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"no/such"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
	}, "\n") + "\n"
	code, stdout, stderr := runOnce(t, dir, input, "--standalone")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 frames (2 parse errors, a batch, a ping), got:\n%s", stdout)
	}
	var frames [][]byte
	for _, l := range lines {
		frames = append(frames, []byte(l))
	}
	assertOnlyFrames(t, frames)
	if !strings.Contains(stdout, `"code":-32700`) || !strings.Contains(stdout, `input is not UTF-8`) ||
		!strings.Contains(stdout, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: no/such before initialize`) ||
		!strings.Contains(stdout, `{"jsonrpc":"2.0","id":3,"result":{}}`) {
		t.Fatalf("answers:\n%s", stdout)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var entry struct {
			PID   int    `json:"pid"`
			State string `json:"state"`
		}
		if json.Unmarshal([]byte(l), &entry) != nil || entry.PID == 0 || entry.State == "" {
			t.Errorf("a log line without pid and state: %s", l)
		}
	}
}

// The exit codes of the layer's contract, and what the messages name.
func TestLayerErrorsKeepTheirExitCodes(t *testing.T) {
	broken := checkout(t)
	writeBroken(t, broken)
	writeManifest := func(body string) string {
		dir := checkout(t)
		os.WriteFile(filepath.Join(dir, ".ai/manifest.yaml"), []byte(body), 0o644)
		layerEdited(t, dir)
		return dir
	}
	nowhere := t.TempDir()
	cases := []struct {
		name  string
		dir   string
		args  []string
		code  int
		names []string
	}{
		{"no manifest", nowhere, []string{"--standalone"}, 12, []string{nowhere, "manifest.yaml"}},
		{"unknown key", writeManifest("schema: ai-repository/v1\nbogus: 1\n"), []string{"--standalone"}, 10, []string{"manifest.yaml", "bogus"}},
		{"other schema", writeManifest("schema: ai-repository/v9\n"), []string{"--standalone"}, 10, []string{"manifest.yaml", "ai-repository/v9"}},
		{"strict refuses a degraded index", broken, []string{"--standalone", "--strict"}, 10, []string{"refusing to serve under --strict"}},
		{"serve under strict refuses a degraded index", broken, []string{"serve", "--strict", "--http-port", "0"}, 10, []string{"refusing to serve under --strict"}},
		{"a bad flag", nowhere, []string{"--no-such-flag"}, 2, []string{"no-such-flag"}},
		{"an unknown command", nowhere, []string{"frobnicate"}, 2, []string{"frobnicate"}},
		{"a bad log format", nowhere, []string{"--log-format", "xml"}, 2, []string{"xml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runOnce(t, tc.dir, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Fatalf("stdout carried %q", stdout)
			}
			for _, n := range tc.names {
				if !strings.Contains(stderr, n) {
					t.Errorf("the message does not name %q:\n%s", n, stderr)
				}
			}
		})
	}
}

// A degraded index is served (without --strict) and says so.
func TestADegradedIndexIsServed(t *testing.T) {
	dir := checkout(t)
	writeBroken(t, dir)
	p := start(t, dir, "--standalone")
	c := ctx(t)
	if _, err := p.Initialize(c, "codex", "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	var repo struct {
		State       string
		Diagnostics []struct{ Level, Path, Message string }
	}
	_, text, _ := p.CallTool(c, "majordomus_repository", nil, &repo)
	if repo.State != "degraded" || len(repo.Diagnostics) == 0 || repo.Diagnostics[0].Path != example.BrokenObject ||
		!strings.Contains(text, `"diagnostics":[{"level":"error","path":`) {
		t.Fatalf("repository: %s", text)
	}
}

// Under --strict, a layer broken while it is served is not served, and
// majordomus_server says so and why until it is fixed: its client would
// otherwise see edits stop showing, with the tools saying all is well.
func TestAStrictServerSaysWhatItWithholds(t *testing.T) {
	dir := checkout(t)
	p := start(t, dir, "--standalone", "--strict")
	c := ctx(t)
	if _, err := p.Initialize(c, "codex", "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	writeBroken(t, dir)
	if _, err := p.WaitLog(c, "degraded layer not served under strict"); err != nil {
		t.Fatal(err)
	}
	var server struct{ Findings []string }
	if _, text, _ := p.CallTool(c, "majordomus_server", nil, &server); len(server.Findings) != 1 ||
		!strings.Contains(server.Findings[0], "not served under --strict") || !strings.Contains(server.Findings[0], example.BrokenObject) {
		t.Fatalf("majordomus_server: %s", text)
	}
}

// A change under .ai/repo/ while a session is open raises the generation
// and the session is told.
func TestAChangeToTheLayerRaisesTheGenerationAndNotifies(t *testing.T) {
	dir := checkout(t)
	p := start(t, dir, "--standalone")
	c := ctx(t)
	if _, err := p.Initialize(c, "codex", "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	if r, _ := p.Call(c, "resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"}); r.Error != nil {
		t.Fatalf("subscribe: %+v", r.Error)
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	for _, method := range []string{"notifications/resources/list_changed", "notifications/resources/updated"} {
		if _, err := p.WaitFrame(c, method, func(f []byte) bool { return strings.Contains(string(f), `"method":"`+method+`"`) }); err != nil {
			t.Fatal(err)
		}
	}
	var repo struct{ Generation int }
	p.CallTool(c, "majordomus_repository", nil, &repo)
	if repo.Generation != 2 {
		t.Fatalf("generation %d after one change, want 2", repo.Generation)
	}
}

// A client that closes its end of stdout ends the process with exit 0,
// a 2026-07-28 listen open or not, whatever serves it.
func TestABrokenStdoutEndsTheProcessCleanly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		version string
	}{
		{"standalone", []string{"--standalone"}, "2025-11-25"},
		{"standalone, a listen open", []string{"--standalone"}, modern},
		{"leaseholder, a listen open", nil, modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, checkout(t), tc.args...)
			c := ctx(t)
			openIn(t, p, tc.version, "codex")
			ping := map[string]any(nil)
			if tc.version == modern {
				ping = withMeta(nil, "codex")
				if _, err := p.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourcesListChanged": true}}, "codex")); err != nil {
					t.Fatal(err)
				}
				if _, err := p.WaitFrame(c, "the listen acknowledged", func(f []byte) bool {
					return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
				}); err != nil {
					t.Fatal(err)
				}
			}
			p.CloseStdout()
			p.Send("tools/list", ping) // its answer meets the broken pipe
			exit, err := p.Wait(c)
			if err != nil || exit.Code != 0 {
				t.Fatalf("exit %+v %v: want 0", exit, err)
			}
			if p.CountLogs("client closed the output") != 1 {
				t.Fatalf("the log does not say why it stopped:\n%s", strings.Join(p.Logs(), "\n"))
			}
		})
	}
}

// SIGTERM ends a standalone process, which dies of the signal.
func TestStandaloneDiesOfSIGTERM(t *testing.T) {
	dir := checkout(t)
	p := start(t, dir, "--standalone")
	c := ctx(t)
	if _, err := p.Initialize(c, "codex", "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	p.Signal(syscall.SIGTERM)
	exit, err := p.Wait(c)
	if err != nil || exit.Signal != syscall.SIGTERM {
		t.Fatalf("exit %+v %v: want death by SIGTERM", exit, err)
	}
}

// The README's first command works.
func TestTheDemoRuns(t *testing.T) {
	code, stdout, stderr := runOnce(t, t.TempDir(), "", "demo")
	if code != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"You are peer p1", "majordomus_search", "\"overlaps\"", "a board of 3",
		"took over as the shared server", "re-attached to the shared server", "corrupt lease", "taking it over",
		"cannot use the shared server", "nothing but protocol frames"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// Each call is shown with what its process said while answering it,
	// before the answer and the next call: every initialize with the
	// election that decided what serves it, the failovers of section 3
	// with where they went.
	lines := strings.Split(stdout, "\n")
	section := ""
	for i, line := range lines[:len(lines)-1] {
		if strings.HasPrefix(line, "## ") {
			section = line
		}
		name, call, ok := strings.Cut(strings.TrimPrefix(line, "→ "), ": ")
		if !ok || !strings.HasPrefix(line, "→ ") || (call != "initialize" && !strings.HasPrefix(section, "## 3.")) {
			continue
		}
		if !strings.HasPrefix(lines[i+1], "  ["+name+" pid ") {
			t.Errorf("%q is not followed by what %s logged about it, but by %q", line, name, lines[i+1])
		}
	}
}
