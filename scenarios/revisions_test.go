package scenarios

// Every live MCP revision is served, the same in every mode
// (docs/protocol.md): a host gets the revision it asks for and byte for
// byte the same answers whether its process leads, attaches, serves alone
// or runs standalone.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// revisions are the live revisions: two with sessions, and 2026-07-28.
var revisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// modern is the revision without initialize or sessions.
const modern = "2026-07-28"

// withMeta is params with the _meta of client's 2026-07-28 requests.
func withMeta(params map[string]any, client string) map[string]any {
	return mcpclient.WithMeta(params, mcpclient.ModernMeta(client))
}

// revisionProbe is a request whose answer must not depend on the mode.
type revisionProbe struct {
	method string
	params map[string]any
}

// revisionProbes are the requests whose answers must not depend on the mode.
var revisionProbes = []revisionProbe{
	{"tools/list", nil},
	{"resources/list", nil},
	{"resources/read", map[string]any{"uri": "majordomus://rule/project.small-commits@1"}},
	{"prompts/list", nil},
	{"prompts/get", map[string]any{"name": "review", "arguments": map[string]any{"change": "HEAD~1..HEAD"}}},
	{"prompts/get", map[string]any{"name": "review", "arguments": map[string]any{}}},
	{"tools/call", map[string]any{"name": "majordomus_list", "arguments": map[string]any{}}},
	{"tools/call", map[string]any{"name": "majordomus_get", "arguments": map[string]any{"uri": "majordomus://adr/adr.0001@1"}}},
	{"tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "commit"}}},
	{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "review"}, "argument": map[string]any{"name": "focus", "value": "t"}}},
	{"logging/setLevel", map[string]any{"level": "info"}},
	{"no/such", nil},
}

// earlyProbes are the revisionProbes a process answers while its election
// runs: all but the unknown method, which waits for what serves the client.
var earlyProbes = revisionProbes[:len(revisionProbes)-1]

// openIn opens p's session in version (a legacy one initializes; 2026-07-28
// probes server/discover, as the official SDKs do), checks it got it, and
// returns the instructions it was given.
func openIn(t *testing.T, p *mcpclient.Process, version, client string) string {
	t.Helper()
	if version != modern {
		res, err := p.Initialize(ctx(t), client, version)
		if err != nil || res.ProtocolVersion != version {
			t.Fatalf("initialize %s: %+v %v", version, res, err)
		}
		p.Notify("notifications/initialized", nil)
		return res.Instructions
	}
	r, err := p.Call(ctx(t), "server/discover", withMeta(nil, client))
	var discovered struct {
		SupportedVersions []string `json:"supportedVersions"`
		Instructions      string   `json:"instructions"`
	}
	if err != nil || r.Error != nil || json.Unmarshal(r.Result, &discovered) != nil || discovered.SupportedVersions[0] != modern {
		t.Fatalf("server/discover: %s %v %v", r.Result, r.Error, err)
	}
	return discovered.Instructions
}

// answersIn is the answer (result or error) in version of every one of probes.
func answersIn(t *testing.T, p *mcpclient.Process, version string, probes []revisionProbe) []string {
	t.Helper()
	var out []string
	for _, pr := range probes {
		params := any(pr.params)
		if version == modern {
			params = withMeta(pr.params, "codex")
		}
		r, err := p.Call(ctx(t), pr.method, params)
		if err != nil {
			t.Fatalf("%s in %s: %v", pr.method, version, err)
		}
		out = append(out, r.Bytes())
	}
	return out
}

// A client of each revision, in each mode — leaseholder, attached through
// a bridge, served alone (the lease unusable), standalone — gets the
// revision it asked for, and the same bytes for every probe (R8 per
// revision).
func TestEveryRevisionIsAnsweredTheSameInEveryMode(t *testing.T) {
	dir := checkout(t)
	lonely := checkout(t)
	if err := os.MkdirAll(filepath.Join(lonely, ".ai/local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lonely, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, lonely)
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			leaseholder := shared(t, dir)
			openIn(t, leaseholder, version, "claude-code")
			serverURL(t, leaseholder)
			attached := shared(t, dir)
			if _, err := attached.WaitLog(ctx(t), "bridging this stdio session"); err != nil {
				t.Fatal(err)
			}
			alone := shared(t, lonely)
			if _, err := alone.WaitLog(ctx(t), "serving this client alone"); err != nil {
				t.Fatal(err)
			}
			standalone := start(t, dir, "--standalone")
			modes := map[string]*mcpclient.Process{"attached": attached, "alone": alone, "standalone": standalone}
			for mode, p := range modes {
				instructions := openIn(t, p, version, "codex")
				if !strings.Contains(instructions, "You are peer p") || (mode == "alone") != strings.Contains(instructions, "served alone") {
					t.Errorf("%s in %s was told:\n%s", version, mode, instructions)
				}
			}
			want := answersIn(t, leaseholder, version, revisionProbes)
			for mode, p := range modes {
				got := answersIn(t, p, version, revisionProbes)
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s %v, %s:\nleaseholder %s\n%-11s %s", revisionProbes[i].method, revisionProbes[i].params, mode, want[i], mode, got[i])
					}
				}
			}
			if version == modern { // a version no header carries as written is refused alike
				for _, odd := range []string{modern + " ", modern + "\t", modern + "\x00"} {
					meta := mcpclient.ModernMeta("codex")
					meta["io.modelcontextprotocol/protocolVersion"] = odd
					answer := func(p *mcpclient.Process) string {
						r, err := p.Call(ctx(t), "tools/list", mcpclient.WithMeta(nil, meta))
						if err != nil {
							t.Fatalf("tools/list in %q: %v", odd, err)
						}
						return string(r.Bytes())
					}
					want := answer(leaseholder)
					for mode, p := range modes {
						if got := answer(p); got != want {
							t.Errorf("tools/list in %q, %s:\nleaseholder %s\n%-11s %s", odd, mode, want, mode, got)
						}
					}
				}
			}
			for _, p := range []*mcpclient.Process{attached, alone, standalone, leaseholder} {
				p.CloseStdin()
				exitsWith(t, p, 0)
			}
		})
	}
}

// Two clients started together in a fresh checkout, many times over, are
// both served whichever wins the lease: two 2026-07-28 clients, and one
// with a 2025-11-25 client — each 2026-07-28 one spawned once to probe
// server/discover and then again for real, as the official TypeScript SDK
// v2 does. Every third round starts them at once; in the others one of
// them starts once the other is served, so that each order is tried
// whatever the machine's speed. The rounds go on until the first
// 2026-07-28 client has been both the leaseholder and attached through a
// bridge (each process's log says which).
func TestClientsOfEveryRevisionStartedTogetherAreServed(t *testing.T) {
	for _, pair := range [][2]string{{modern, modern}, {modern, "2025-11-25"}} {
		t.Run(pair[0]+"+"+pair[1], func(t *testing.T) {
			seen := map[bool]int{} // rounds the modern client was attached (true) or not
			for round := 0; round < 30 && (round < 3 || seen[true] == 0 || seen[false] == 0); round++ {
				dir := checkout(t)
				logs := t.TempDir()
				var wg, arrived sync.WaitGroup
				arrived.Add(len(pair))
				all := make(chan struct{}) // closed once each client was served, or failed
				go func() { arrived.Wait(); close(all) }()
				served := []chan struct{}{make(chan struct{}), make(chan struct{})}
				for i, version := range pair {
					wg.Go(func() {
						arrive := sync.OnceFunc(arrived.Done)
						defer arrive()
						servedNow := sync.OnceFunc(func() { close(served[i]) })
						defer servedNow()
						if other := 1 - i; round%3 == 1+other {
							<-served[other] // this round, the other goes first
						}
						if version == modern {
							probe, _ := revisionClient(t, dir, version)
							probe.Close()
						}
						log := filepath.Join(logs, fmt.Sprint(i))
						c, res := revisionClient(t, dir, version, "--log-file", log)
						defer c.Close()
						servedNow()
						if res.ProtocolVersion != version {
							t.Errorf("%s negotiated %s", version, res.ProtocolVersion)
							return
						}
						if tools, err := c.ListTools(ctx(t), mcp.ListToolsRequest{}); err != nil || len(tools.Tools) == 0 {
							t.Errorf("%s: tools/list: %v %v", version, tools, err)
						}
						arrive()
						<-all // both served at once: one of them is attached
						if i == 0 {
							text, _ := os.ReadFile(log)
							seen[strings.Contains(string(text), "bridging this stdio session")]++
						}
					})
				}
				wg.Wait()
				if t.Failed() {
					return
				}
			}
			if seen[true] == 0 || seen[false] == 0 {
				t.Fatalf("in %d rounds the 2026-07-28 client was attached %d times and led %d: both were not tried", seen[true]+seen[false], seen[true], seen[false])
			}
		})
	}
}

// A 2026-07-28 client is one peer on the board, named, announced and seen
// by a legacy client in the same checkout, and seeing it; when its
// leaseholder is killed and its own process takes over, it keeps its peer
// id and its announcement is carried (issue 13, points 4 and 6).
func TestModernAndLegacyClientsShareOneBoard(t *testing.T) {
	dir := checkout(t)
	legacy := shared(t, dir)
	initialize(t, legacy, "claude-code")
	serverURL(t, legacy)
	if isErr, text, err := legacy.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "refactor the lease", "scope": []string{"registry/"}}, nil); err != nil || isErr {
		t.Fatalf("the legacy client's announcement: %s %v", text, err)
	}
	m := shared(t, dir)
	attached(t, m)
	told := openIn(t, m, modern, "codex-modern")
	meta := mcpclient.ModernMeta("codex-modern")
	if isErr, text, err := m.CallToolWithMeta(ctx(t), "majordomus_announce", map[string]any{"intent": "fix the bridge", "scope": []string{"transport/"}}, meta, nil); err != nil || isErr {
		t.Fatalf("the modern client's announcement: %s %v", text, err)
	}

	seen := peersOf(t, legacy)
	var id string
	for _, p := range seen.Peers {
		if p.Client.Name == "codex-modern" && p.Announcement != nil && p.Announcement.Intent == "fix the bridge" && p.Transport == "http" {
			id = p.ID
		}
	}
	if seen.Count != 2 || id == "" {
		t.Fatalf("the legacy client's board: %+v", seen)
	}
	if !strings.Contains(told, "You are peer "+id+" ") {
		t.Fatalf("server/discover told the modern client:\n%s\nwant its peer id %s", told, id)
	}
	var board boardView
	if isErr, text, err := m.CallToolWithMeta(ctx(t), "majordomus_peers", nil, meta, &board); err != nil || isErr || board.Caller != id || board.Count != 2 {
		t.Fatalf("the modern client's board: %+v (%s %v), want it to be %s", board, text, err, id)
	}

	legacy.Kill(ctx(t))
	board = boardView{}
	if isErr, text, err := m.CallToolWithMeta(ctx(t), "majordomus_peers", nil, meta, &board); err != nil || isErr {
		t.Fatalf("after the take-over: %s %v", text, err)
	}
	if _, err := m.WaitLog(ctx(t), "shared server listening on"); err != nil {
		t.Fatal(err)
	}
	intent := ""
	for _, p := range board.Peers {
		if p.ID == id && p.Announcement != nil {
			intent = p.Announcement.Intent
		}
	}
	if board.Caller != id || intent != "fix the bridge" {
		t.Fatalf("after the take-over the modern client's board is %+v; want it still %s, its announcement carried", board, id)
	}
}

// A layer change reaches a 2026-07-28 client through its
// subscriptions/listen stream, bridged and served in process alike: the
// lists that changed, and the object it subscribed to; closing the stream
// (notifications/cancelled) ends it on the server too.
func TestAChangeToTheLayerReachesModernListeners(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := shared(t, dir)
	attached(t, m)
	alone := start(t, dir, "--standalone") // served in process: the stream is its own
	const uri = "majordomus://prompt/review"
	listens := map[*mcpclient.Process]json.RawMessage{}
	for _, p := range []*mcpclient.Process{m, alone} {
		openIn(t, p, modern, "codex-modern")
		listen, err := p.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{
			"resourcesListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{uri},
		}}, "codex-modern"))
		if err != nil {
			t.Fatal(err)
		}
		listens[p] = listen
		if _, err := p.WaitFrame(ctx(t), "the subscriptions acknowledged", func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.WaitLog(ctx(t), "listen stream opened"); err != nil {
		t.Fatal(err)
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	for _, p := range []*mcpclient.Process{m, alone} {
		for _, want := range []string{`"method":"notifications/resources/list_changed"`, `"method":"notifications/prompts/list_changed"`,
			`"method":"notifications/resources/updated"`} {
			if _, err := p.WaitFrame(ctx(t), want, func(f []byte) bool {
				return strings.Contains(string(f), want) && (!strings.Contains(want, "updated") || strings.Contains(string(f), uri))
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// In process, the cancelled stream ends and the process goes on.
	alone.Notify("notifications/cancelled", map[string]any{"requestId": listens[alone]})
	if r, err := alone.Call(ctx(t), "tools/list", withMeta(nil, "codex-modern")); err != nil || r.Error != nil {
		t.Fatalf("after its listen was cancelled, the standalone process: %v %v", r.Error, err)
	}
	listen := listens[m]
	// Closing the stream ends it on the server, which then counts no
	// session but its own client's.
	m.Notify("notifications/cancelled", map[string]any{"requestId": listen})
	if _, err := a.WaitLog(ctx(t), "listen stream closed"); err != nil {
		t.Fatal(err)
	}
}

// A 2026-07-28 client served in process keeps its listen when its session
// is handed on (here to the server its process starts again once the lease
// was lost): the listen goes on there, and hears the next change.
func TestAModernListenServedInProcessGoesOnWhenItsSessionIsHandedOn(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	openIn(t, a, modern, "codex-modern")
	serverURL(t, a)
	if _, err := a.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourcesListChanged": true}}, "codex-modern")); err != nil {
		t.Fatal(err)
	}
	acknowledged := func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
	}
	if _, err := a.WaitFrame(ctx(t), "the listen acknowledged", acknowledged); err != nil {
		t.Fatal(err)
	}
	n := len(a.Frames())
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitFrameAfter(ctx(t), "the listen acknowledged again", n, acknowledged); err != nil {
		t.Fatal(err)
	}
	n = len(a.Frames())
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	if _, err := a.WaitFrameAfter(ctx(t), "list_changed", n, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
}
