package surface

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type announceKey struct{}

// carrying is a fixture whose sessions' contexts claim ids and bring
// announcements, and whose peer numbers are drawn from a counter that
// says how often it was drawn from.
func carrying(t *testing.T) (*fixture, *int) {
	drawn := new(int)
	f := newFixtureOf(t, layer.Config{}, func(c *Config) {
		c.PeerClaim = func(ctx context.Context) string { id, _ := ctx.Value(claimKey{}).(string); return id }
		c.CarriedAnnouncement = func(ctx context.Context) json.RawMessage {
			a, _ := ctx.Value(announceKey{}).(json.RawMessage)
			return a
		}
		c.PeerNumbers = func(atLeast int) (int, error) { *drawn++; return max(40+*drawn, atLeast), nil }
	})
	return f, drawn
}

// carriedContext is what a session carried from another server is opened
// or initialized under.
func carriedContext(id, announce string) context.Context {
	return context.WithValue(context.WithValue(context.Background(), claimKey{}, id), announceKey{}, json.RawMessage(announce))
}

// A session opened again claiming its id and bringing its announcement is
// on the board with both from its first instant: opened in process (the
// claim in the context of its registration), or by an initialize (the
// claim in its context, as over HTTP). No peer number is drawn for it,
// nothing is an execution, and the initialize says the announcement is
// on the board.
func TestACarriedSessionOpensWithItsIDAndItsAnnouncement(t *testing.T) {
	f, drawn := carrying(t)
	sess := server.NewInProcessSession("stdio", nil)
	if err := f.s.MCP.RegisterSession(carriedContext("p7", `{"intent":"the parser","scope":["lib"]}`), sess); err != nil {
		t.Fatal(err)
	}
	peers, _ := f.s.Board.Peers()
	if len(peers) != 1 || peers[0].ID != "p7" || peers[0].Announcement == nil || peers[0].Announcement.Intent != "the parser" || *drawn != 0 {
		t.Fatalf("opened in process: %+v, %d numbers drawn", peers, *drawn)
	}
	at := peers[0].Announcement.At

	initialize := func(sess *server.InProcessSession, claim, announce string) {
		t.Helper()
		msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
			"params": map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "codex"}}})
		answer, _ := json.Marshal(f.s.MCP.HandleMessage(f.s.MCP.WithContext(carriedContext(claim, announce), sess), msg))
		var r struct{ Result mcp.InitializeResult }
		mustDecode(t, answer, &r)
		if r.Result.Meta == nil || r.Result.Meta.AdditionalFields[PeerMeta] != claim || r.Result.Meta.AdditionalFields[AnnouncedMeta] != true {
			t.Fatalf("initialize answered %s", answer)
		}
	}
	initialize(sess, "p7", `{"intent":"the parser","scope":["lib"]}`) // its replayed initialize
	// an HTTP session is on the board from its initialize
	initialize(server.NewInProcessSession("http-like", nil), "p9", `{"intent":"the docs","scope":["doc"]}`)
	peers, count := f.s.Board.Peers()
	if count != 2 || peers[0].Announcement.At != at || peers[1].ID != "p9" || peers[1].Announcement.Intent != "the docs" || *drawn != 0 {
		t.Fatalf("after the initializes: %+v, %d numbers drawn", peers, *drawn)
	}
	if recent := f.s.Executions.Recent(10); len(recent) != 0 {
		t.Fatalf("executions: %+v", recent)
	}
	// a session that claims nothing draws its number
	f.connect("gemini-cli")
	if *drawn != 1 {
		t.Fatalf("%d numbers drawn for a new session", *drawn)
	}
}

// A majordomus_announce marked as a replay is not an execution, and one
// the same as the peer's keeps its time; the mark hides no other call.
func TestAReplayedAnnouncementIsNotAnExecution(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	call := func(name string, args map[string]any, replay bool) {
		t.Helper()
		params, send := map[string]any{"name": name, "arguments": args}, c.rpc
		if replay {
			params["_meta"], send = map[string]any{ReplayMeta: true}, c.carry
		}
		if _, errText := f.toolResult(name, send("tools/call", params)); errText != "" {
			t.Fatal(errText)
		}
	}
	call("majordomus_announce", map[string]any{"intent": "the parser", "scope": []any{"lib"}}, false)
	peers, _ := f.s.Board.Peers()
	at := peers[0].Announcement.At
	f.s.cfg.Now = func() time.Time { return time.Now().Add(time.Hour) }
	call("majordomus_announce", map[string]any{"intent": "the parser", "scope": []any{"lib"}}, true)
	call("majordomus_list", nil, true)
	var tools []string
	for _, x := range f.s.Executions.Recent(10) {
		tools = append(tools, x.Tool)
	}
	if !slices.Equal(tools, []string{"majordomus_list", "majordomus_announce"}) {
		t.Fatalf("the history: %v", tools)
	}
	if peers, _ := f.s.Board.Peers(); peers[0].Announcement.At != at {
		t.Fatalf("a replay of the same announcement restamped it: %v, was %v", peers[0].Announcement.At, at)
	}
}

// The calls a client made alone come with its session: the history takes
// them as the caller's, oldest first, and the call that brings them is not
// an execution. Those the alone server gave away it forgets.
func TestACarriedHistoryJoinsAsTheCallersOwn(t *testing.T) {
	alone := newFixture(t)
	own := ownSession{server.NewInProcessSession("stdio", nil)}
	if err := alone.s.MCP.RegisterSession(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"majordomus_list", "majordomus_repository"} {
		if _, _, msg := alone.handle(context.Background(), own, "tools/call", map[string]any{"name": tool}); msg != "" {
			t.Fatal(msg)
		}
	}
	history, n := alone.s.Executions.Unshared()
	if _, _, msg := alone.handle(context.Background(), own, "tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "x"}}); msg != "" {
		t.Fatal(msg) // answered while the history is carried
	}
	alone.s.Executions.Shared(n)
	if again, _ := alone.s.Executions.Unshared(); strings.Count(string(again), `"tool"`) != 1 || !strings.Contains(string(again), "majordomus_search") {
		t.Fatalf("after the calls given away, %s waits; want the call made since alone", again)
	}

	f := newFixture(t)
	f.s.Keep(State{}, func([]byte) bool { return true }) // a leaseholder's
	f.connect("claude-code")
	c := f.connect("codex")
	params := map[string]any{"name": "majordomus_executions", "_meta": map[string]any{HistoryMeta: history}}
	for range 2 { // the second time, as a server that died as it took them had kept them
		if _, errText := f.toolResult("majordomus_executions", c.carry("tools/call", params)); errText != "" {
			t.Fatal(errText)
		}
	}
	peers, _ := f.s.Board.Peers()
	var got []string
	for _, x := range f.s.Executions.Recent(10) {
		got = append(got, x.Tool+" "+x.Peer)
	}
	if want := []string{"majordomus_repository " + peers[1].ID, "majordomus_list " + peers[1].ID}; !slices.Equal(got, want) {
		t.Fatalf("the history, newest first: %q, want %q", got, want)
	}
}

// Carried calls join the history as its newest, in the order they were
// made (the history only grows at its end, so that every read extends the
// one before), each at the time it says, even a later one than now (a
// clock that jumped), lasting no less than nothing; brought again, not
// one is kept twice.
func TestACarriedHistoryJoinsAsTheNewest(t *testing.T) {
	f := newFixture(t)
	f.s.Keep(State{}, func([]byte) bool { return true })
	c := f.connect("codex")
	if _, errText := f.toolResult("majordomus_list", c.rpc("tools/call", map[string]any{"name": "majordomus_list"})); errText != "" {
		t.Fatal(errText)
	}
	now := time.Now()
	history := []Execution{
		{Tool: "majordomus_repository", At: now.Add(-time.Hour), DurationMS: 2, OK: true},
		{Tool: "majordomus_search", At: now.Add(24 * time.Hour), DurationMS: -5, OK: true},
		{Tool: "majordomus_search", At: now.Add(25 * time.Hour), DurationMS: -5, OK: true}, // another call, though made "now" too
	}
	params := map[string]any{"name": "majordomus_executions", "_meta": map[string]any{HistoryMeta: history}}
	if _, errText := f.toolResult("majordomus_executions", c.carry("tools/call", params)); errText != "" {
		t.Fatal(errText)
	}
	recent := f.s.Executions.Recent(10)
	var got []string
	for _, x := range recent {
		got = append(got, x.Tool)
	}
	if want := []string{"majordomus_search", "majordomus_search", "majordomus_repository", "majordomus_list"}; !slices.Equal(got, want) {
		t.Fatalf("the history, most recently recorded first: %q, want %q", got, want)
	}
	if x := recent[0]; !x.At.Equal(history[2].At) || x.DurationMS != 0 {
		t.Errorf("a call dated in 25 h, lasting -5 ms, is kept as %+v", x)
	}
}

// A journal has calls as they were recorded (a call that began earlier
// may have ended later, a carried one joined after calls made since): the
// history it is loaded into keeps that order, as every read before showed
// it.
func TestALoadedHistoryKeepsItsOrder(t *testing.T) {
	e := &Executions{changes: &changes{}}
	now := time.Now()
	e.keep([]Execution{{Tool: "majordomus_list", At: now}, {Tool: "majordomus_repository", At: now.Add(-time.Hour)}}, func(Execution) bool { return true })
	if got := e.Recent(10); len(got) != 2 || got[0].Tool != "majordomus_repository" {
		t.Fatalf("newest first: %+v", got)
	}
}

// A history brought again, by a client whose server died as it took it
// (it kept some, under the id it gave the client), or taken over by the
// process that brought it, joins once, as the client's.
func TestAHistoryBroughtAgainJoinsOnce(t *testing.T) {
	at := time.Now().Add(-time.Minute).UTC()
	x := Execution{Tool: "majordomus_list", Peer: "p3", At: at, DurationMS: 1.5, OK: true}

	e := &Executions{changes: &changes{}}
	e.RecordOwn(x)
	kept := x
	kept.Peer = "p9" // as the server it was carried to recorded it
	if merged := e.keep([]Execution{kept}, func(Execution) bool { return true }); len(merged) != 1 || merged[0].Peer != "p3" {
		t.Fatalf("taken over: %+v, want the call once, its client's", merged)
	}

	f := newFixture(t)
	f.s.Keep(State{}, func([]byte) bool { return true })
	c := f.connect("codex")
	params := map[string]any{"name": "majordomus_executions", "_meta": map[string]any{HistoryMeta: []Execution{x}}}
	for range 2 {
		if _, errText := f.toolResult("majordomus_executions", c.carry("tools/call", params)); errText != "" {
			t.Fatal(errText)
		}
	}
	if got := f.s.Executions.Recent(10); len(got) != 1 {
		t.Fatalf("brought twice: %+v, want the call once", got)
	}
}

// A call sent again, by the key its client's process gave it, joins once:
// recorded again by the same peer, merged in from the calls made while
// nothing kept them, or brought with a history. Only its own client's call
// keeps it away: another peer naming the same key is recorded.
func TestACallSentAgainJoinsOnceByItsKey(t *testing.T) {
	at := time.Now().Add(-time.Minute).UTC()
	first := Execution{Tool: "majordomus_announce", Peer: "p2", At: at, DurationMS: 1, OK: true, Call: "k.1"}
	again := first
	again.At, again.DurationMS = at.Add(time.Second), 2 // it began anew

	e := &Executions{changes: &changes{}}
	e.Record(first)
	e.Record(again)
	other := again
	other.Peer = "p3"
	e.Record(other)
	if got := e.Recent(10); len(got) != 2 || got[0].Peer != "p3" || got[1].Peer != "p2" {
		t.Fatalf("recorded: %+v; want the call once, and another peer's of that key", got)
	}

	alone := &Executions{changes: &changes{}}
	alone.RecordOwn(again) // sent again where nothing kept it: served alone, say
	if merged := alone.keep([]Execution{first}, func(Execution) bool { return true }); len(merged) != 1 {
		t.Fatalf("kept: %+v; want the call once", merged)
	}
	if e.recordNew(again, false); len(e.Recent(10)) != 2 {
		t.Fatal("a history brought with the call sent again does not know it has it")
	}
	if e.recordNew(Execution{Tool: "majordomus_list", Peer: "p4", At: at, Call: "k.1"}, false); len(e.Recent(10)) != 3 {
		t.Fatal("another tool's call naming the key passes for the call")
	}
}

// The calls a history took are forgotten by the mark they were given
// with, however many the bound cut from the waiting ones since: a call
// made meanwhile waits on.
func TestTheCallsGivenAwayAreForgottenByTheirMark(t *testing.T) {
	e := &Executions{changes: &changes{}}
	for range 2*executionsKept - 1 {
		e.RecordOwn(Execution{Tool: "majordomus_list"})
	}
	_, mark := e.Unshared()
	e.RecordOwn(Execution{Tool: "majordomus_search"}) // the bound cuts the oldest
	e.Shared(mark)
	if waiting, _ := e.Unshared(); strings.Count(string(waiting), `"tool"`) != 1 || !strings.Contains(string(waiting), "majordomus_search") {
		t.Fatalf("after the calls given away, %.200s waits; want the one made since", waiting)
	}
}

// Keeping merges the checkout's state in — the own client's calls made
// here while nothing kept them after it, never another session's;
// the departed announcers listed until their id is claimed again — and
// gives every change to the sink, which a mirror turns back into the
// same state.
func TestKeepingMergesTheCheckoutsStateAndGivesEveryChange(t *testing.T) {
	f, _ := carrying(t)
	base := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	f.s.Executions.RecordOwn(Execution{Tool: "majordomus_get", Peer: "p1", At: base.Add(2 * time.Second)}) // served alone, say
	loaded := State{
		Executions: []Execution{{Tool: "majordomus_list", Peer: "p2", At: base}, {Tool: "majordomus_search", Peer: "p3", At: base.Add(3 * time.Second)}},
		Peers: []Peer{
			{ID: "p3", Client: Client{Name: "gemini-cli"}, Transport: "http", Attached: true, Announcement: &Announcement{Intent: "the docs", Scope: []string{"doc"}}},
			{ID: "p4", Client: Client{Name: "codex"}, Transport: "http", Attached: true, Announcement: &Announcement{Intent: "the parser", Scope: []string{"lib"}}},
		},
	}
	var mu sync.Mutex
	var lines [][]byte
	merged := f.s.Keep(loaded, func(line []byte) bool { mu.Lock(); lines = append(lines, line); mu.Unlock(); return true })
	if waiting, _ := f.s.Executions.Unshared(); !strings.Contains(string(waiting), "majordomus_get") {
		t.Fatalf("once merged, %s waits; want the own client's call, until the state has it", waiting)
	}
	f.s.Executions.Written() // as internal/node's keeper does
	var order []string
	for _, x := range merged.Executions {
		order = append(order, x.Tool)
	}
	if !slices.Equal(order, []string{"majordomus_list", "majordomus_search", "majordomus_get"}) || len(merged.Peers) != 2 || merged.Layer.Number != 1 {
		t.Fatalf("merged: %v, %+v, generation %d", order, merged.Peers, merged.Layer.Number)
	}
	peers, count := f.s.Board.Peers()
	if count != 0 || len(peers) != 2 || peers[0].Attached {
		t.Fatalf("the loaded announcers are not listed as departed: %+v", peers)
	}
	mirror := NewStateMirror(merged)

	// p4 is back: its carried session claims its id
	sess := server.NewInProcessSession("back", nil)
	if err := f.s.MCP.RegisterSession(carriedContext("p4", `{"intent":"the parser, still","scope":["lib"]}`), sess); err != nil {
		t.Fatal(err)
	}
	c := &client{f: f, sess: sess}
	c.tool("majordomus_list", nil)
	was := f.lay.Current()
	f.lay.Continue(6, "other files") // as a rebuild publishes the next
	f.s.IndexChanged(was, f.lay.Current())
	f.s.Unkeep()
	c.tool("majordomus_get", map[string]any{"uri": "majordomus://repository"})
	own := ownSession{server.NewInProcessSession("stdio", nil)}
	if err := f.s.MCP.RegisterSession(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	if _, _, msg := f.handle(context.Background(), own, "tools/call", map[string]any{"name": "majordomus_repository"}); msg != "" {
		t.Fatal(msg)
	}

	mu.Lock()
	for _, line := range lines {
		mirror.Apply(line)
	}
	mu.Unlock()
	st, _, err := DecodeState(mirror.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Executions) != 4 || st.Executions[3].Tool != "majordomus_list" || st.Executions[3].Peer != "p4" {
		t.Fatalf("the kept executions: %+v", st.Executions)
	}
	if len(st.Peers) != 2 || st.Peers[1].ID != "p4" || !st.Peers[1].Attached || st.Peers[1].Announcement.Intent != "the parser, still" {
		t.Fatalf("the kept announcers: %+v", st.Peers)
	}
	if st.Layer != (Generation{7, f.lay.Current().Digest()}) {
		t.Fatalf("the kept generation is %+v, want 7", st.Layer)
	}
	again := f.s.Keep(State{}, func([]byte) bool { return true })
	var tools []string
	for _, x := range again.Executions {
		tools = append(tools, x.Tool)
	}
	if !slices.Equal(tools, []string{"majordomus_repository"}) {
		t.Fatalf("kept again, the calls not yet kept are %v: the own client's only, another session's is not the checkout's", tools)
	}
}

// A state written and read back is the same state, whatever its peers'
// own text says.
func TestAStateReadsBackAsWritten(t *testing.T) {
	at := time.Date(2026, 7, 1, 9, 0, 0, 123456789, time.UTC)
	st := State{
		Executions: []Execution{{Tool: "majordomus_list", Peer: "p1", At: at, DurationMS: 0.125, OK: true}},
		Peers: []Peer{{ID: "p2", Client: Client{Name: "x\n\"}\n{\"schema\":\"evil\"}"}, Transport: "stdio", ConnectedAt: at, LastSeen: at,
			Announcement: &Announcement{Intent: "line\nbreak", Scope: []string{"a", "b"}, At: at}}},
		Layer: Generation{Number: 12, Digest: "d"},
	}
	raw := EncodeState(st)
	if n := strings.Count(string(raw), "\n"); n != 4 {
		t.Fatalf("%d lines for 4 records:\n%s", n, raw)
	}
	back, torn, err := DecodeState(raw)
	if err != nil || torn || back.Layer != st.Layer || !back.Executions[0].At.Equal(at) || back.Peers[0].Client.Name != st.Peers[0].Client.Name || back.Peers[0].Announcement.Intent != "line\nbreak" {
		t.Fatalf("read back %+v %v %v", back, torn, err)
	}
}

// The marks that carry a session (a replayed announcement, the history of
// calls made alone) are heeded only from what carries it: in what a client
// writes they are data. (Any client rewrote the checkout's history with
// one call: up to a thousand made-up calls, every real one pushed out.)
func TestAClientsOwnCarryingMarksAreData(t *testing.T) {
	f := newFixture(t)
	f.s.Keep(State{}, func([]byte) bool { return true })
	c := f.connect("codex")
	forged := []Execution{{Tool: "majordomus_list", At: time.Now().Add(-time.Hour), OK: false}}
	for _, p := range []map[string]any{
		{"name": "majordomus_executions", "_meta": map[string]any{HistoryMeta: forged}},
		{"name": "majordomus_announce", "arguments": map[string]any{"intent": "the parser"}, "_meta": map[string]any{ReplayMeta: true}},
	} {
		if _, errText := f.toolResult(p["name"].(string), c.rpc("tools/call", p)); errText != "" {
			t.Fatal(errText)
		}
	}
	var got []string
	for _, x := range f.s.Executions.Recent(10) {
		got = append(got, x.Tool)
	}
	if want := []string{"majordomus_announce", "majordomus_executions"}; !slices.Equal(got, want) {
		t.Fatalf("the history, newest first: %q, want the client's two calls as made", got)
	}
}
