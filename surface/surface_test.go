package surface

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

func TestToolsListIsCompleteAndAnnotatedHonestly(t *testing.T) {
	f := newFixture(t)
	c := f.connect("claude-code")
	var list struct {
		Tools []mcp.Tool `json:"tools"`
	}
	mustDecode(t, c.rpc("tools/list", nil), &list)
	want := map[string]bool{ // name -> read-only
		"majordomus_list": true, "majordomus_get": true, "majordomus_search": true, "majordomus_repository": true,
		"majordomus_peers": true, "majordomus_announce": false, "majordomus_executions": true, "majordomus_server": true,
		"majordomus_fleet_inventory": true,
	}
	if len(list.Tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(list.Tools), len(want))
	}
	for _, tool := range list.Tools {
		ro, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil || *a.ReadOnlyHint != ro || a.DestructiveHint == nil || *a.DestructiveHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
			t.Errorf("%s: annotations %+v, want readOnly=%v, not destructive, closed world", tool.Name, a, ro)
		}
		// a limit's schema says what the tool takes: whole numbers within its bounds
		if limit, ok := tool.InputSchema.Properties["limit"].(map[string]any); ok {
			hi, _ := limit["maximum"].(float64)
			if limit["type"] != "integer" || limit["minimum"] != 1.0 || hi < 1 {
				t.Errorf("%s: limit %v, want an integer from 1 to a maximum", tool.Name, limit)
			}
			args := map[string]any{"query": "commit", "limit": hi}
			if tool.Name != "majordomus_search" {
				delete(args, "query")
			}
			if _, refused := c.tool(tool.Name, args); refused != "" {
				t.Errorf("%s: its maximum limit %v is refused: %s", tool.Name, hi, refused)
			}
			args["limit"] = hi + 1
			if out, refused := c.tool(tool.Name, args); refused == "" {
				t.Errorf("%s: a limit over its maximum is taken: %s", tool.Name, out)
			}
		}
	}
}

// The text of an answer is JSON a model reads as the layer wrote it: the
// <, > and & of Markdown are not escaped inside it (the text is a JSON
// string, so \u003e there reaches the model as six characters).
func TestAnAnswersTextKeepsMarkdownAsWritten(t *testing.T) {
	root := testtemp.Dir(t)
	body := "Run `a && b` -> then <details>."
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".ai/repo/knowledge/arrows.md"), []byte("---\nid: arrows\nkind: knowledge\n---\n"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newFixtureOf(t, layer.Config{Root: root}).connect("claude-code")
	var res struct{ Content []struct{ Text string } }
	mustDecode(t, c.rpc("tools/call", map[string]any{"name": "majordomus_get", "arguments": map[string]any{"uri": "majordomus://knowledge/arrows"}}), &res)
	var read struct{ Contents []struct{ Text string } }
	mustDecode(t, c.rpc("resources/read", map[string]any{"uri": "majordomus://knowledge/arrows"}), &read)
	for what, text := range map[string]string{"majordomus_get": res.Content[0].Text, "resources/read": read.Contents[0].Text} {
		if !strings.Contains(text, body) {
			t.Errorf("%s's text does not hold the body as written: %s", what, text)
		}
	}
}

func TestListGetAndSearchReadTheLayer(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")

	var list struct {
		Count   int `json:"count"`
		Objects []struct{ URI, Kind string }
	}
	out, _ := c.tool("majordomus_list", map[string]any{"kind": "rule"})
	mustDecode(t, out, &list)
	if list.Count != 3 || len(list.Objects) != 3 {
		t.Fatalf("rules: %s", out)
	}
	out, _ = c.tool("majordomus_list", map[string]any{"tag": "review"})
	mustDecode(t, out, &list)
	if list.Count != 2 {
		t.Fatalf("tag review: %s", out)
	}

	var obj objectDetail
	out, _ = c.tool("majordomus_get", map[string]any{"uri": "majordomus://adr/adr.0001@1"})
	mustDecode(t, out, &obj)
	if obj.Title != "One shared MCP server per checkout" || obj.FrontMatter["status"] != "accepted" || !strings.Contains(obj.Body, "# Decision") {
		t.Fatalf("get: %s", out)
	}

	var found struct {
		Count int
		Hits  []struct{ URI string }
	}
	out, _ = c.tool("majordomus_search", map[string]any{"query": "announce", "limit": 1})
	mustDecode(t, out, &found)
	if found.Count != 1 || found.Hits[0].URI != "majordomus://rule/project.announce-before-editing@1" {
		t.Fatalf("search: %s", out)
	}
}

func TestBadArgumentsGetErrorResultsNamingTheArgument(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"majordomus_get", map[string]any{}, "argument 'uri' is required"},
		{"majordomus_get", map[string]any{"uri": 5}, "argument 'uri' must be a string"},
		{"majordomus_get", map[string]any{"uri": "majordomus://rule/nope@1"}, "argument 'uri': no object majordomus://rule/nope@1"},
		{"majordomus_search", map[string]any{"query": "  "}, "argument 'query' is required and must not be blank"},
		{"majordomus_search", map[string]any{"query": "x", "limit": "ten"}, "argument 'limit' must be an integer"},
		{"majordomus_search", map[string]any{"query": "x", "limit": 0}, "argument 'limit' must be between 1 and 100"},
		{"majordomus_search", map[string]any{"query": "x", "limit": 2.5}, "argument 'limit' must be an integer"},
		{"majordomus_list", map[string]any{"kind": true}, "argument 'kind' must be a string"},
		{"majordomus_list", map[string]any{"bogus": 1}, "argument 'bogus' is not taken by this tool"},
		{"majordomus_announce", map[string]any{"intent": " "}, "argument 'intent' is required and must not be blank"},
		{"majordomus_announce", map[string]any{"intent": "\u200b\u200e \u3164\u2800\x00\ufe0f\u034f"}, "argument 'intent' is required and must not be blank"},
		{"majordomus_announce", map[string]any{"intent": "x", "scope": "lib"}, "argument 'scope' must be an array of strings"},
		{"majordomus_announce", map[string]any{"intent": "x", "scope": []any{1}}, "argument 'scope' must be an array of strings"},
		{"majordomus_executions", map[string]any{"limit": -1}, "argument 'limit' must be between 1 and 1000"},
		{"majordomus_repository", map[string]any{"x": 1}, "argument 'x' is not taken by this tool"},
	}
	for _, tc := range cases {
		_, errText := c.tool(tc.tool, tc.args)
		if !strings.Contains(errText, tc.want) {
			t.Errorf("%s %v: error %q, want %q", tc.tool, tc.args, errText, tc.want)
		}
	}
	// arguments that are not an object fail as a tool error too
	var res struct {
		IsError bool `json:"isError"`
		Content []struct{ Text string }
	}
	mustDecode(t, c.rpc("tools/call", map[string]any{"name": "majordomus_list", "arguments": []int{1}}), &res)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "arguments must be a JSON object") {
		t.Errorf("arguments as an array: %+v", res)
	}
}

func TestRepositoryAndServerDescribeTheCheckoutAndTheProcess(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	var repo repository
	out, _ := c.tool("majordomus_repository", nil)
	mustDecode(t, out, &repo)
	if repo.Name != filepath.Base(f.root) || repo.RepositoryID != layer.RepositoryID(f.root) || repo.State != "ok" ||
		repo.Generation != 1 || repo.Kinds["rule"] != 3 || repo.Objects != 6 || repo.Diagnostics == nil {
		t.Fatalf("repository: %s", out)
	}
	if strings.Contains(string(out), f.root) {
		t.Fatalf("the repository report discloses the checkout path: %s", out)
	}

	var rep ServerReport
	out, _ = c.tool("majordomus_server", nil)
	mustDecode(t, out, &rep)
	if rep.PID != os.Getpid() || rep.Role != "standalone" || rep.URL != nil || rep.Leaseholder || rep.Sessions != 1 || rep.Version != "9.9.9" {
		t.Fatalf("server: %s", out)
	}
	f.proc = Process{Role: "lease-lost", URL: "http://127.0.0.1:1", LeasePath: "/x/server.json", Findings: []string{"what is described above is another process"}}
	out, _ = c.tool("majordomus_server", nil)
	mustDecode(t, out, &rep)
	if rep.Role != "lease-lost" || *rep.URL != "http://127.0.0.1:1" || len(rep.Findings) != 1 {
		t.Fatalf("server after losing the lease: %s", out)
	}
}

func TestThePeerBoardAnnouncementsAndOverlaps(t *testing.T) {
	f := newFixture(t)
	a := f.connect("claude-code")
	b := f.connect("codex")

	out, _ := a.tool("majordomus_announce", map[string]any{"intent": "refactor the parser", "scope": []any{"lib/parse", " lib/lex ", ""}})
	var rec struct {
		Peer     Peer
		Overlaps []Overlap
	}
	mustDecode(t, out, &rec)
	if rec.Peer.ID != "p1" || strings.Join(rec.Peer.Announcement.Scope, ",") != "lib/parse,lib/lex" || len(rec.Overlaps) != 0 {
		t.Fatalf("first announcement: %s", out)
	}
	// one's own earlier claim is not an overlap
	out, _ = a.tool("majordomus_announce", map[string]any{"intent": "refactor the parser", "scope": []any{"lib/parse/x.go"}})
	mustDecode(t, out, &rec)
	if len(rec.Overlaps) != 0 {
		t.Fatalf("own claim counted as an overlap: %s", out)
	}
	out, _ = b.tool("majordomus_announce", map[string]any{"intent": "rename lib", "scope": []any{"lib", "docs"}})
	mustDecode(t, out, &rec)
	if rec.Peer.ID != "p2" || len(rec.Overlaps) != 1 || rec.Overlaps[0].Peer != "p1" || strings.Join(rec.Overlaps[0].Paths, ",") != "lib" {
		t.Fatalf("overlap: %s", out)
	}

	var board struct {
		Count  int
		Caller string
		Peers  []Peer
	}
	out, _ = b.tool("majordomus_peers", nil)
	mustDecode(t, out, &board)
	if board.Count != 2 || board.Caller != "p2" || board.Peers[0].Client.Name != "claude-code" || board.Peers[1].Transport != "http" {
		t.Fatalf("board: %s", out)
	}
	a.leave()
	out, _ = b.tool("majordomus_peers", nil)
	mustDecode(t, out, &board)
	if board.Count != 1 || len(board.Peers) != 2 || board.Peers[0].Attached {
		t.Fatalf("a departed announcer stays listed, detached: %s", out)
	}
	c := f.connect("gemini-cli")
	if id := f.s.Board.PeerID(c.sess.SessionID()); id != "p3" {
		t.Fatalf("peer ids are never reused: got %s", id)
	}
}

func TestExecutionsRecordEveryToolCall(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	c.tool("majordomus_repository", nil)
	c.tool("majordomus_get", map[string]any{"uri": "majordomus://nope"})
	var ex struct {
		Count      int
		Executions []Execution
	}
	out, _ := c.tool("majordomus_executions", nil)
	mustDecode(t, out, &ex)
	if ex.Count != 2 || ex.Executions[0].Tool != "majordomus_get" || ex.Executions[0].OK || !ex.Executions[1].OK || ex.Executions[1].Peer != "p1" {
		t.Fatalf("executions: %s", out)
	}
}

// A call whose session ends while it is answered (a server stopping ends
// its sessions so) is recorded under the peer that made it.
func TestACallWhoseSessionEndsMeanwhileIsRecordedUnderItsPeer(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	leaving := f.s.recordExecution(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c.leave()
		return mcp.NewToolResultText("answered"), nil
	})
	var req mcp.CallToolRequest
	req.Params.Name = "majordomus_repository"
	if _, err := leaving(f.s.MCP.WithContext(context.Background(), c.sess), req); err != nil {
		t.Fatal(err)
	}
	if recent := f.s.Executions.Recent(10); len(recent) != 1 || recent[0].Peer != "p1" {
		t.Fatalf("the history: %+v", recent)
	}
}

// A call whose session left the board before it began is of no peer: it
// neither runs nor is recorded.
func TestACallWhoseSessionEndedFirstDoesNotRun(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	ran := false
	call := f.s.recordExecution(func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ran = true
		return mcp.NewToolResultText("answered"), nil
	})
	c.leave()
	var req mcp.CallToolRequest
	req.Params.Name = "majordomus_repository"
	res, err := call(f.s.MCP.WithContext(context.Background(), c.sess), req)
	if err != nil || res == nil || !res.IsError || ran {
		t.Fatalf("a call of an ended session: ran %v, answered %+v, %v", ran, res, err)
	}
	if recent := f.s.Executions.Recent(10); len(recent) != 0 {
		t.Fatalf("the history: %+v", recent)
	}
}

func TestInstructionsNameThePeerTheBoardAndOnlyASharedServersURL(t *testing.T) {
	f := newFixture(t)
	f.connect("claude-code")
	sess := server.NewInProcessSession("second", nil)
	if err := f.s.MCP.RegisterSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	c := &client{f: f, sess: sess}
	var init mcp.InitializeResult
	mustDecode(t, c.rpc("initialize", map[string]any{"protocolVersion": "2025-06-18", "clientInfo": map[string]any{"name": "codex", "version": "1"}}), &init)
	for _, want := range []string{"You are peer p2", `p1 "claude-code" (http)`, "majordomus_announce"} {
		if !strings.Contains(init.Instructions, want) {
			t.Errorf("instructions lack %q:\n%s", want, init.Instructions)
		}
	}
	if strings.Contains(init.Instructions, "http://") {
		t.Errorf("a session no shared server serves got a URL:\n%s", init.Instructions)
	}
	f.proc.URL = "http://127.0.0.1:8741"
	mustDecode(t, c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "codex"}}), &init)
	if !strings.Contains(init.Instructions, "http://127.0.0.1:8741") {
		t.Errorf("a shared session's instructions lack the URL:\n%s", init.Instructions)
	}
}

func TestResourcesListAndRead(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	var list struct{ Resources []mcp.Resource }
	mustDecode(t, c.rpc("resources/list", nil), &list)
	if len(list.Resources) != 8 {
		t.Fatalf("%d resources, want 6 objects + repository + server", len(list.Resources))
	}
	var read struct{ Contents []mcp.TextResourceContents }
	mustDecode(t, c.rpc("resources/read", map[string]any{"uri": "majordomus://prompt/review"}), &read)
	if !strings.Contains(read.Contents[0].Text, `"id":"review"`) {
		t.Fatalf("read: %+v", read)
	}
	if _, errText := c.try("resources/read", map[string]any{"uri": "majordomus://prompt/nope"}); !strings.Contains(errText, "majordomus://prompt/nope") {
		t.Fatalf("an unknown URI: %q", errText)
	}
}

func TestAChangedIndexNotifiesEverySessionAndTheSubscribers(t *testing.T) {
	f := newFixture(t)
	a := f.connect("claude-code")
	b := f.connect("codex")
	a.rpc("resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"})
	drain(a.sess)
	drain(b.sess)

	path := filepath.Join(f.root, ".ai/repo/prompts/review.md")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(data, "\n5. One more question.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := layer.Build(f.root, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.s.IndexChanged(f.lay.Current(), ix)

	gotA, gotB := drain(a.sess), drain(b.sess)
	if !gotA[mcp.MethodNotificationResourcesListChanged] || !gotB[mcp.MethodNotificationResourcesListChanged] {
		t.Errorf("list_changed: a=%v b=%v", gotA, gotB)
	}
	if !gotA[mcp.MethodNotificationResourceUpdated] || gotB[mcp.MethodNotificationResourceUpdated] {
		t.Errorf("resources/updated only to the subscriber: a=%v b=%v", gotA, gotB)
	}

	// majordomus://server says the layer's generation and state too: its
	// subscribers hear of a rebuild, as the repository's do. (They never
	// heard of any change.)
	b.rpc("resources/subscribe", map[string]any{"uri": serverURI})
	drain(b.sess)
	f.s.IndexChanged(ix, ix)
	if got := drain(b.sess); !got[mcp.MethodNotificationResourceUpdated] {
		t.Errorf("a subscriber of %s heard %v of a rebuild", serverURI, got)
	}
}

// An object that gains a version is listed under its new URI alone, as
// the tools list it, and as a process started now would list it.
func TestAnObjectThatGainsAVersionIsListedOnce(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	path := filepath.Join(f.root, ".ai/repo/knowledge/glossary.md")
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, []byte(strings.Replace(string(data), "kind: knowledge\n", "kind: knowledge\nversion: 3\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ix, err := layer.Build(f.root, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.s.IndexChanged(f.lay.Current(), ix)

	var list struct{ Resources []mcp.Resource }
	mustDecode(t, c.rpc("resources/list", nil), &list)
	var glossary []string
	for _, r := range list.Resources {
		if strings.Contains(r.URI, "glossary") {
			glossary = append(glossary, r.URI)
		}
	}
	if want := []string{"majordomus://knowledge/glossary@3"}; !slices.Equal(glossary, want) {
		t.Errorf("the glossary is listed as %q, want %q", glossary, want)
	}
}

// What the process says about sharing reaches every session as a
// notifications/message at warning, unless the client asked for less.
func TestNotifyReachesEverySession(t *testing.T) {
	f := newFixture(t)
	a := f.connect("claude-code")
	b := f.connect("codex")
	b.rpc("logging/setLevel", map[string]any{"level": "error"})
	drain(a.sess)
	drain(b.sess)
	f.s.Notify(mcp.LoggingLevelWarning, "majordomus: this process took over")
	if got := drain(a.sess); !got["notifications/message"] {
		t.Errorf("a session at the default level got %v", got)
	}
	if got := drain(b.sess); got["notifications/message"] {
		t.Errorf("a session that asked for errors only got %v", got)
	}
}

// A subscription is kept only to a resource the surface serves, by the URI
// it is updated under, and only while its session lasts: URIs made up, an
// object's without its version, or left by their sessions (even while
// their subscribe was answered), are not kept for ever.
func TestSubscriptionsAreKeptOnlyToServedResourcesWhileTheirSessionLasts(t *testing.T) {
	f := newFixture(t)
	a := f.connect("claude-code")
	b := f.connect("codex")
	for i := range 100 {
		a.rpc("resources/subscribe", map[string]any{"uri": fmt.Sprintf("majordomus://made/up-%d", i)})
	}
	a.rpc("resources/subscribe", map[string]any{"uri": "majordomus://rule/project.errors-wrapped"}) // listed with its version only
	a.rpc("resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"})
	b.rpc("resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"})
	b.rpc("resources/subscribe", map[string]any{"uri": repositoryURI})
	kept := func() []string {
		f.s.subs.mu.Lock()
		defer f.s.subs.mu.Unlock()
		return slices.Sorted(maps.Keys(f.s.subs.byURI))
	}
	if got := kept(); !slices.Equal(got, []string{"majordomus://prompt/review", repositoryURI}) {
		t.Fatalf("subscriptions kept to %v", got)
	}
	a.leave()
	a.rpc("resources/subscribe", map[string]any{"uri": repositoryURI}) // as if answered while it left
	b.rpc("resources/unsubscribe", map[string]any{"uri": repositoryURI})
	b.leave()
	if got := kept(); len(got) != 0 {
		t.Fatalf("with every session gone, subscriptions kept to %v", got)
	}
}
