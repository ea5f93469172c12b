package scenarios

// Every mode gives the same answer to the letter, at the edges too
// (docs/design.md#server-and-bridge, R8, docs/protocol.md): malformed,
// early and late messages, sent raw over stdio, get the same bytes from a
// leaseholder, an attached process, one served alone and one standalone, in
// each live revision.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// edgeMeta is the _meta of a 2026-07-28 request.
const edgeMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}}`

// edges is the corpus: each is sent as one raw line, early (before the
// session opens) or late (after), ID standing for a fresh request id. A
// new case is one line.
var edges = []struct {
	early bool
	line  string
}{
	{true, `{"jsonrpc":"2.0","id":ID,"method":"ping"}`},
	{true, `{"jsonrpc":"2.0","id":ID,"method":"tools/list"}`},
	{true, `{"jsonrpc":"2.0","id":ID,"method":"no/such"}`},
	{true, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{true, `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`},
	{true, `{"jsonrpc":"2.0","id":ID,"method":"initialize"}`},
	{true, `[{"jsonrpc":"2.0","id":ID,"method":"ping"},{"jsonrpc":"2.0","id":ID,"method":"tools/list"}]`},
	{true, `[{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{` + edgeMeta + `}},{"jsonrpc":"2.0","id":ID,"method":"server/discover","params":{` + edgeMeta + `}}]`},
	{true, `[{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}},{"jsonrpc":"2.0","id":ID,"method":"ping"}]`},
	{false, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{false, `{"jsonrpc":"2.0","id":null,"method":"ping"}`},
	{false, `[{"jsonrpc":"2.0","id":ID,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}]`},
	{false, `{"id":ID,"method":"ping"}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":"majordomus_list"}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":[]}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"arguments":{}}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"arguments":{},` + edgeMeta + `}}`},
	{false, `[{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{` + edgeMeta + `}},{"jsonrpc":"2.0","id":ID,"method":"server/discover","params":{` + edgeMeta + `}}]`},
	{false, `[{"jsonrpc":"2.0","id":ID,"method":"resources/list"},{"jsonrpc":"2.0","method":"notifications/no-such"}]`},
	{false, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
	{false, `[]`},
	{false, `[1]`},
	{false, `{"jsonrpc":"2.0","method":"no/such"}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"no/such"}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"no/such","params":{` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"ping","params":{` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"logging/setLevel","params":{"level":"debug",` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"resources/subscribe","params":{"uri":"majordomus://index",` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{"_meta":"not an object"}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`},
	{false, "{\"jsonrpc\":\"2.0\",\"id\":ID,\"method\":\"ping\",\"params\":{\"pad\":\"\xff\xfe\"}}"},
	{false, `{"jsonrpc":"2.0","id":ID,"error":{"code":-32601,"message":"roots are not supported"}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"result":null}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":5}`},
	{false, `{"jsonrpc":2,"id":ID,"method":5}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":""}`},
	{false, `{"jsonrpc":"2.0","id":ID}`},
	{false, `{not json`},
	{false, `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`},
	{false, `[{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"},{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}]`},
	{false, `{"jsonrpc":"2.0","id":2.5,"method":"ping"}`},
	{false, `{"jsonrpc":"2.0","id":9007199254740993.0,"method":"ping"}`},
	{false, `{"jsonrpc":"2.0","id":9.007199254740993e15,"method":"ping"}`},
	{true, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/` + strings.Repeat("x", 100000) + `","params":{` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"` + strings.Repeat("<", 200000) + `",` + edgeMeta + `}}`},
	{false, `{"jsonrpc":"2.0","id":ID,"method":"ping"}`},
}

// peerIDs are what may differ between modes: the peer a client is.
var peerIDs = regexp.MustCompile(`\bp[0-9]+\b`)

// numericIDs are a line's numeric ids: each is answered, as it was sent.
var numericIDs = regexp.MustCompile(`"id":-?[0-9][0-9.e]*`)

// edgeAnswers sends p the corpus's cases of one phase and returns, for
// each, every frame it wrote until it answered the case and a ping sent
// after it, peer ids masked, but for the notice a client served alone is
// given.
func edgeAnswers(t *testing.T, p *mcpclient.Process, early bool) []string {
	t.Helper()
	var out []string
	for i, e := range edges {
		if e.early != early {
			continue
		}
		ids, n := 0, len(p.Frames())
		line := e.line
		for strings.Contains(line, "ID") && ids < 10 {
			line = strings.Replace(line, "ID", strconv.Quote("edge-"+strconv.Itoa(i)+"-"+strconv.Itoa(ids)), 1)
			ids++
		}
		fence := strconv.Quote("fence-" + strconv.Itoa(i))
		if err := p.SendLine(line); err != nil {
			t.Fatal(err)
		}
		if err := p.SendLine(`{"jsonrpc":"2.0","id":` + fence + `,"method":"ping"}`); err != nil {
			t.Fatal(err)
		}
		wait := []string{`"id":` + fence}
		// What is not JSON is answered before the fence is read; a
		// client's answer to a request is answered nothing.
		answer := !strings.Contains(line, `"method"`) && (strings.Contains(line, `"result"`) || strings.Contains(line, `"error"`))
		if ids > 0 && utf8.ValidString(line) && json.Valid([]byte(line)) && !answer {
			wait = append(wait, `"id":"edge-`+strconv.Itoa(i)+`-`)
		}
		wait = append(wait, numericIDs.FindAllString(line, -1)...)
		if strings.Contains(line, `"id":null`) || ids == 0 && json.Valid([]byte(line)) && !strings.Contains(line, `"method"`) {
			// answered with id null (a null id, an empty or bad batch),
			// whenever the loop, which answers lines concurrently, gets
			// to it: before or after the fence
			wait = append(wait, `"id":null`)
		}
		for _, w := range wait {
			if _, err := p.WaitFrameAfter(ctx(t), w, n, func(f []byte) bool { return strings.Contains(string(f), w) }); err != nil {
				t.Fatalf("%.200s: %v", e.line, err)
			}
		}
		var got []string
		for _, f := range p.Frames()[n:] {
			// A client served alone is told so (docs/design.md#the-layer):
			// that notice is the mode's own.
			told := strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), "served alone")
			if !told && !strings.Contains(string(f), `"id":`+fence) {
				got = append(got, peerIDs.ReplaceAllString(string(f), "p#"))
			}
		}
		out = append(out, strings.Join(got, "\n"))
	}
	return out
}

// The corpus, raw over stdio, in each revision and each mode — a
// leaseholder, an attached process, one served alone (the lease
// unusable), one standalone — is answered with the same bytes, peer ids
// masked.
func TestEdgeMessagesAreAnsweredTheSameInEveryMode(t *testing.T) {
	dir := checkout(t)
	lonely := checkout(t)
	if err := os.MkdirAll(filepath.Join(lonely, ".ai/local"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lonely, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, version := range revisions {
		t.Run(version, func(t *testing.T) {
			leaseholder := shared(t, dir)
			serverURL(t, leaseholder)
			attachedP := shared(t, dir)
			attached(t, attachedP)
			alone := shared(t, lonely)
			if _, err := alone.WaitLog(ctx(t), "serving this client alone"); err != nil {
				t.Fatal(err)
			}
			standalone := start(t, dir, "--standalone")
			modes := []string{"leaseholder", "attached", "alone", "standalone"}
			procs := []*mcpclient.Process{leaseholder, attachedP, alone, standalone}
			answers := make([][]string, len(procs))
			for i, p := range procs {
				answers[i] = edgeAnswers(t, p, true)
				openIn(t, p, version, "codex")
				answers[i] = append(answers[i], edgeAnswers(t, p, false)...)
			}
			for i := 1; i < len(procs); i++ {
				for c := range answers[0] {
					if answers[i][c] != answers[0][c] {
						t.Errorf("case %d:\n%-11s %.600s\n%-11s %.600s", c, modes[0], answers[0][c], modes[i], answers[i][c])
					}
				}
			}
			for _, p := range procs {
				p.CloseStdin()
			}
			for _, p := range procs {
				exitsWith(t, p, 0)
			}
		})
	}
}

// A client that initializes again through a bridge is the one peer it was,
// renamed, as in process: no second peer is left on the board. Its
// announcement goes with it, and the answer says no more than in process
// (not the mark by which its bridge learns the server took the
// announcement).
func TestASecondInitializeThroughABridgeRenamesItsPeer(t *testing.T) {
	dir := checkout(t)
	leaseholder := shared(t, dir)
	initialize(t, leaseholder, "claude-code")
	serverURL(t, leaseholder)
	p := shared(t, dir)
	attached(t, p)
	first := initialize(t, p, "codex")
	call(t, p, "majordomus_announce", map[string]any{"intent": "the parser", "scope": []string{"lib"}})
	answer, err := p.Call(ctx(t), "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "gemini", "version": "1.2.3"}})
	if err != nil || answer.Error != nil || strings.Contains(string(answer.Result), "io.majordomus/announced") {
		t.Fatalf("the second initialize: %s %v %v", answer.Result, answer.Error, err)
	}
	var res mcpclient.InitializeResult
	if err := json.Unmarshal(answer.Result, &res); err != nil {
		t.Fatal(err)
	}
	second := res.Instructions
	was, is := peerIDs.FindString(first), peerIDs.FindString(second)
	if was == "" || was != is {
		t.Fatalf("peer %q, then %q", was, is)
	}
	board := peersOf(t, leaseholder)
	var names []string
	for _, peer := range board.Peers {
		if peer.Attached {
			names = append(names, peer.ID+" "+peer.Client.Name)
		}
	}
	if len(names) != 2 || !strings.Contains(strings.Join(names, ","), is+" gemini") {
		t.Fatalf("the board lists %v", names)
	}
	for _, peer := range board.Peers {
		if peer.ID == is && (peer.Announcement == nil || peer.Announcement.Intent != "the parser") {
			t.Fatalf("renamed, the peer lost its announcement: %+v", peer)
		}
	}
	p.CloseStdin()
	leaseholder.CloseStdin()
	exitsWith(t, p, 0)
	exitsWith(t, leaseholder, 0)
}

// A 2026-07-28 client hears exactly what its listen filter asks for, in
// process and bridged alike: a prompt edited, it hears prompts/list_changed,
// never the resources/list_changed its server sends first to whoever did
// not filter it out.
func TestAModernClientHearsOnlyWhatItsListenAsksForInEveryMode(t *testing.T) {
	dir := checkout(t)
	leaseholder := shared(t, dir)
	serverURL(t, leaseholder)
	attachedP := shared(t, dir)
	attached(t, attachedP)
	standalone := start(t, dir, "--standalone")
	procs := map[string]*mcpclient.Process{"leaseholder": leaseholder, "attached": attachedP, "standalone": standalone}
	for _, p := range procs {
		openIn(t, p, modern, "codex-modern")
		if _, err := p.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"promptsListChanged": true}}, "codex-modern")); err != nil {
			t.Fatal(err)
		}
		if _, err := p.WaitFrame(ctx(t), "the subscriptions acknowledged", func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
		}); err != nil {
			t.Fatal(err)
		}
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	heard := map[string]string{}
	for mode, p := range procs {
		frame, err := p.WaitFrame(ctx(t), "prompts/list_changed", func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/prompts/list_changed"`)
		})
		if err != nil {
			t.Fatal(err)
		}
		heard[mode] = string(frame)
		for _, f := range p.Frames() {
			if strings.Contains(string(f), "notifications/resources/list_changed") {
				t.Errorf("%s heard what it did not ask for: %s", mode, f)
			}
		}
	}
	if heard["attached"] != heard["leaseholder"] || heard["standalone"] != heard["leaseholder"] {
		t.Errorf("heard differently: %v", heard)
	}
	for _, p := range procs {
		p.CloseStdin()
	}
	for _, p := range procs {
		exitsWith(t, p, 0)
	}
}
