package node

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// getBoard reads one of the board's endpoints with the lease's token, as a
// script does.
func getBoard(t *testing.T, url, path string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", secret.Authorization(keyAt(url)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// The board's endpoints answer the tools' JSON, byte for byte: the page is
// no peer (its caller is ""), and an uptime is read at its own moment.
func TestTheBoardAnswersWhatTheToolsAnswer(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitState(machine.Leaseholder)
	a.client.tool("majordomus_announce", map[string]any{"intent": "parse <b>things</b>", "scope": []any{"lib/parse"}}, nil)
	url := b.url

	api := getBoard(t, url, "/board/api/executions") // read first: the tool's own call is recorded after it answers
	if tool := a.client.tool("majordomus_executions", map[string]any{}, nil); api != tool {
		t.Errorf("/board/api/executions answered\n%s\nmajordomus_executions\n%s", api, tool)
	}
	tool := a.client.tool("majordomus_peers", map[string]any{}, nil)
	api = getBoard(t, url, "/board/api/peers")
	var caller struct{ Caller string }
	if err := json.Unmarshal([]byte(tool), &caller); err != nil || caller.Caller == "" {
		t.Fatalf("majordomus_peers answered %s", tool)
	}
	// the leaseholder's own client is seen as of each reading
	seen := regexp.MustCompile(`"last_seen":"[^"]*"`)
	if want := strings.Replace(tool, `"caller":"`+caller.Caller+`"`, `"caller":""`, 1); seen.ReplaceAllString(api, "S") != seen.ReplaceAllString(want, "S") {
		t.Errorf("/board/api/peers answered\n%s\nwant majordomus_peers' answer for no caller\n%s", api, want)
	}
	uptime := regexp.MustCompile(`"uptime_seconds":[0-9.e+-]+`)
	tool = a.client.tool("majordomus_server", map[string]any{}, nil)
	api = getBoard(t, url, "/board/api/server")
	if uptime.ReplaceAllString(api, "U") != uptime.ReplaceAllString(tool, "U") || !strings.Contains(api, `"layer_state":"ok"`) {
		t.Errorf("/board/api/server answered\n%s\nmajordomus_server\n%s", api, tool)
	}
	var graph struct {
		State string          `json:"state"`
		Graph json.RawMessage `json:"graph"`
	}
	printed, _ := machine.Graph("json")
	var want bytes.Buffer
	_ = json.Compact(&want, []byte(printed))
	if err := json.Unmarshal([]byte(getBoard(t, url, "/board/api/graph")), &graph); err != nil || graph.State != string(machine.Leaseholder) || string(graph.Graph) != want.String() {
		t.Errorf("/board/api/graph: state %q, graph the same as `graph --format json`: %v (%v)", graph.State, string(graph.Graph) == want.String(), err)
	}
}

// The revision /board/events watches changes with what the page shows,
// and not with time alone; a change closes the channel handed out before
// it.
func TestTheBoardsRevisionFollowsTheBoard(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitState(machine.Leaseholder)
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	src := newBoardSource(srv.surface, a.node.State)
	before, changed := src.Changes()
	if again, _ := src.Changes(); again != before {
		t.Fatalf("nothing changed, yet the revision went from %s to %s", before, again)
	}
	a.client.tool("majordomus_announce", map[string]any{"intent": "x", "scope": []any{"a"}}, nil)
	<-changed
	if after, _ := src.Changes(); after == before {
		t.Fatalf("an announcement left the revision at %s", after)
	}
}

// The leaseholder's own client is seen as of every reading of the board,
// so what it asks (a ping, a list) changes nothing the
// page shows: the revision stays, and the page's stream says nothing,
// however often the client asks (a bridged client's lists and reads never
// reach the server at all).
func TestTheLeaseholdersOwnClientAskingLeavesTheBoardsRevision(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("shared server listening")
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	src := newBoardSource(srv.surface, a.node.State)
	before, changed := src.Changes()
	for _, method := range []string{"ping", "tools/list", "resources/list"} {
		if answer := a.client.call(method, map[string]any{}, nil); answer["result"] == nil {
			t.Fatalf("%s answered %v", method, answer)
		}
	}
	select {
	case <-changed:
		after, _ := src.Changes()
		t.Fatalf("the own client's ping and lists moved the board's revision from %s to %s: the page's stream sends a change", before, after)
	default:
	}
}

// The OpenAPI document describes what /board/api/overlaps answers as it
// is: a pair whose paths overlap more than it lists says how many more,
// and the document names that field.
func TestTheOpenAPIDocumentDescribesTheOverlapsAnswered(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("shared server listening")
	var scope []any
	for i := range 12 {
		scope = append(scope, fmt.Sprintf("lib/f%d.go", i))
	}
	a.client.tool("majordomus_announce", map[string]any{"intent": "many", "scope": scope}, nil)
	sid := openSession(t, b.url)
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"all","scope":["lib"]}}}`
	resp := mcpRequest(t, http.MethodPost, b.url, sid, strings.NewReader(body))
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	var answered struct{ Overlaps []map[string]any }
	if err := json.Unmarshal([]byte(getBoard(t, b.url, "/board/api/overlaps")), &answered); err != nil || len(answered.Overlaps) != 1 {
		t.Fatalf("/board/api/overlaps answered %+v (%v)", answered, err)
	}
	var doc struct {
		Components struct {
			Schemas struct {
				Overlaps struct {
					Properties struct {
						Overlaps struct {
							Items struct {
								Properties map[string]json.RawMessage `json:"properties"`
							} `json:"items"`
						} `json:"overlaps"`
					} `json:"properties"`
				}
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(getBoard(t, b.url, "/board/api/openapi.json")), &doc); err != nil {
		t.Fatal(err)
	}
	documented := doc.Components.Schemas.Overlaps.Properties.Overlaps.Items.Properties
	for field := range answered.Overlaps[0] {
		if _, ok := documented[field]; !ok {
			t.Errorf("/board/api/overlaps answers %q, which openapi.json does not describe: %v", field, answered.Overlaps[0])
		}
	}
}

// A server that loses its lease says so to its board page's stream at
// once, not at the stream's next keep-alive (15 s): its state is part of
// the revision, and nothing else the page watches moves. (`serve`, with
// one HTTP session to drain.)
func TestALostLeaseMovesTheBoardsRevision(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, false)
	a.awaitLog("shared server listening")
	openSession(t, b.url) // the lease-lost server drains it
	a.awaitLog("http session opened")
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	src := newBoardSource(srv.surface, a.node.State)
	b.set("x", "http://127.0.0.1:1")
	timeout := time.After(wait)
	for {
		rev, changed := src.Changes()
		if strings.HasSuffix(rev, string(machine.LeaseLost)) {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("the revision is %s, and the node is %s", rev, a.node.State())
		}
	}
}

// The leaseholder's own client, idle, is seen as of every reading of the
// board, as a bridged one is at each of its bridge's heartbeats: the agent
// that serves everyone is not the stalest row on the board while its client
// is connected, and no timer wakes the process to keep it fresh.
func TestTheLeaseholdersIdleClientIsSeenAsOfEveryReading(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitState(machine.Leaseholder)
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	seen := func() time.Time {
		peers, _ := srv.surface.Board.Peers()
		i := slices.IndexFunc(peers, func(p surface.Peer) bool { return p.Transport == "stdio" && p.Attached })
		if i < 0 {
			t.Fatalf("no attached stdio peer on the board: %+v", peers)
		}
		return peers[i].LastSeen
	}
	first, until := seen(), time.Now().Add(wait)
	for !time.Now().UTC().Round(time.Millisecond).After(first) { // the clock is the event waited for
		if time.Now().After(until) {
			t.Fatalf("the clock stayed at %s", first)
		}
		runtime.Gosched()
	}
	if again := seen(); !again.After(first) {
		t.Fatalf("the idle client, last seen at %s, was still last seen then at a later reading", first)
	}
}

// The browser is handed a page of this user's, not the link: the page
// sends it on to the link (escaped: it is markup), one file per server,
// replaced by every new link, and nothing else is left beside it.
func TestTheBoardIsOpenedThroughAPageOfItsUsersOnly(t *testing.T) {
	home := testtemp.Dir(t)
	for _, v := range []string{"XDG_CACHE_HOME", "HOME", "LocalAppData"} {
		t.Setenv(v, home)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	var pages []string
	for _, token := range []string{"a1", "b2"} {
		page, _, err := writeBoardOpener("http://127.0.0.1:8741/board?token=" + token + "&x=<y>")
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, page)
	}
	path := filepath.Join(cache, "majordomus-mcp", "board-8741.html")
	if pages[0] != pages[1] || pages[1] != fileURL(path) || !strings.HasPrefix(pages[1], "file:///") || strings.Contains(pages[1], "token") {
		t.Fatalf("the browser is handed %q, then %q; want %s, which names no token", pages[0], pages[1], fileURL(path))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := `content="0;url=http://127.0.0.1:8741/board?token=b2&amp;x=&lt;y&gt;"`; !strings.Contains(string(b), want) {
		t.Errorf("the page lacks %s:\n%s", want, b)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(entries) != 1 {
		t.Errorf("beside the page: %v %v", entries, err)
	}
}

// Each server's link leaves its page (board-PORT.html) in the cache
// directory, and a server takes a new port at each start wherever another
// holds the default one (a second checkout): a page whose link has long
// expired opens nothing, and is not kept, or the directory would gather
// one for every server whose board was ever opened.
func TestTheBoardsExpiredPagesAreNotKept(t *testing.T) {
	home := testtemp.Dir(t)
	for _, v := range []string{"XDG_CACHE_HOME", "HOME", "LocalAppData"} {
		t.Setenv(v, home)
	}
	var dir string
	for port := 40000; port < 40200; port++ {
		_, file, err := writeBoardOpener("http://127.0.0.1:" + strconv.Itoa(port) + "/board?token=t" + strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Dir(file)
		old := time.Now().Add(-24 * time.Hour) // its server, and its link, are long gone
		if err := os.Chtimes(file, old, old); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 2 {
		t.Errorf("after 200 servers' links, %d pages are kept in %s; want the last one or two", len(entries), dir)
	}
}

// A 2026-07-28 client that claims a departed peer's id is that peer back
// with its announcement, as a session opened again that claims it is.
func TestAModernClientClaimingADepartedIDGetsItsAnnouncementBack(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("shared server listening")
	url := b.url
	sid, answer := postInitialize(t, url)
	peer := peerOf(t, answer)
	mcpRequest(t, http.MethodPost, url, sid, strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)).Body.Close()
	mcpRequest(t, http.MethodPost, url, sid, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"fix the parser","scope":["lib/parse"]}}}`)).Body.Close()
	deleteSession(t, url, sid)

	// The client reads the board, claiming its id, as 2026-07-28 asks.
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"majordomus_peers","arguments":{},"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"},"io.majordomus/peer":"` + peer + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": secret.Authorization(keyAt(url)), "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "majordomus_peers"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Result struct{ Content []struct{ Text string } }
	}
	var board struct {
		Caller string
		Peers  []map[string]any
	}
	if json.Unmarshal(raw, &r) != nil || len(r.Result.Content) != 1 || json.Unmarshal([]byte(r.Result.Content[0].Text), &board) != nil {
		t.Fatalf("majordomus_peers answered %s", raw)
	}
	for _, p := range board.Peers {
		if p["id"] != peer {
			continue
		}
		back, _ := json.Marshal(p["announcement"])
		if board.Caller != peer || p["attached"] != true || !strings.Contains(string(back), `"intent":"fix the parser","scope":["lib/parse"]`) {
			t.Fatalf("the client claiming %s is %s, and %s is listed %v", peer, board.Caller, peer, p)
		}
		return
	}
	t.Fatalf("%s is not on the board: %s", peer, raw)
}

// A layer that --strict withholds is one of the server's findings, which
// its board page shows: the revision its stream watches moves with it,
// though the layer it serves, and so the surface, did not change.
func TestAWithheldLayerMovesTheBoardsRevision(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	co.Strict = true
	layerLog := newLogTap()
	withheld := make(chan struct{})
	layerLog.hook("degraded layer not served under strict", sync.OnceFunc(func() { close(withheld) }))
	co.Logger = zap.New(layerLog)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitState(machine.Leaseholder)
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	src := newBoardSource(srv.surface, a.node.State)
	before, _ := src.Changes()
	if err := example.WriteBrokenObject(co.Root); err != nil {
		t.Fatal(err)
	}
	select {
	case <-withheld:
	case <-time.After(wait):
		t.Fatal("the broken layer was not withheld")
	}
	if !strings.Contains(getBoard(t, b.url, "/board/api/server"), "not served under --strict") {
		t.Fatal("/board/api/server does not say the layer is withheld")
	}
	if after, _ := src.Changes(); after == before {
		t.Errorf("the layer was withheld, a finding the page shows, and the revision stayed %s", after)
	}
}
