package together

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// Messages mcp-go would answer leniently, or that come before initialize,
// get the same bytes from a bridged and a local session, and the answer
// each must be.
func TestEdgeMessagesAreAnsweredTheSameBridgedAndLocal(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	const modern = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	type edge struct{ id, line, want string }
	early := []edge{
		{"null", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"2", `{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"3", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: tools/list before initialize`},
		{"4", `{"jsonrpc":"2.0","id":4,"method":"initialize"}`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,`},
		{"5", `[{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{` + modern + `}}]`, `[{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: 2026-07-28 has no batches`},
		// _meta's keys are matched exactly, as mcp-go matches them
		{"12", `{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{` + strings.ToLower(modern) + `}}`, `{"jsonrpc":"2.0","id":12,"error":{"code":-32600,"message":"invalid request: tools/list before initialize`},
	}
	late := []edge{
		{"null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"null", `[1]`, `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object"}}]`},
		{"null", `{"jsonrpc":"2.0","id":{"a":[1]},"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a request's id is a string or a number"}}`},
		{"null", `{"jsonrpc":"2.0","id":true,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"null", `{"jsonrpc":"1.0","id":true,"method":"ping"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"null", `{"jsonrpc":"2.0","id":[1],"method":""}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"null", `{"jsonrpc":"2.0","id":{"x":2}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"null", `{"jsonrpc":"2.0","id":true,"method":"ping","result":null}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"6", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":"majordomus_list"}`, `{"jsonrpc":"2.0","id":6,"error":{"code":-32602,`},
		{"7", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[]}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,`},
		{"8", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{` + modern + `}}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"invalid params: tools/call names`},
		{"9", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"arguments":{}}}`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"invalid params: tools/call names`},
		{"null", `{"jsonrpc":"2.0","id":null,"method":"ping","params":{` + modern + `}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
		{"10", `{"jsonrpc":"2.0","id":10,"method":"initialize"}`, `{"jsonrpc":"2.0","id":10,"error":{"code":-32602,`},
		{"11", `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":11,"result":{`},
		{`"\ud800"`, `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `{"jsonrpc":"2.0","id":"\ud800","error":{"code":-32600,"message":"invalid request: a string id is Unicode text`},
		{`"\udc00x"`, `{"jsonrpc":"2.0","id":"\udc00x","method":"tools/list"}`, `{"jsonrpc":"2.0","id":"\udc00x","error":{"code":-32600,`},
		// a name mcp-go reads in another case than the tag's, or not a string
		{"19", `{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"majordomus_list","NAME":"",` + modern + `}}`, `{"jsonrpc":"2.0","id":19,"error":{"code":-32602,"message":"invalid params: tools/call names`},
		{"20", `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"majordomus_list","Name":5,` + modern + `}}`, `{"jsonrpc":"2.0","id":20,"error":{"code":-32602,"message":"invalid params: tools/call names`},
		{"21", `{"jsonrpc":"2.0","id":21,"method":"resources/read","params":{"uri":"majordomus://x","URI":"",` + modern + `}}`, `{"jsonrpc":"2.0","id":21,"error":{"code":-32602,"message":"invalid params: resources/read names`},
		// a value of another type than mcp-go reads: invalid params, not an unparsable request
		{"22", `{"jsonrpc":"2.0","id":22,"method":"prompts/get","params":{"name":"review","arguments":{"change":5}}}`, `{"jsonrpc":"2.0","id":22,"error":{"code":-32602,"message":"invalid params: params.arguments holds a number where a string is taken"}}`},
		{"23", `{"jsonrpc":"2.0","id":23,"method":"resources/subscribe","params":{"uri":5}}`, `{"jsonrpc":"2.0","id":23,"error":{"code":-32602,"message":"invalid params: params.uri holds a number where a string is taken"}}`},
		{"24", `{"jsonrpc":"2.0","id":24,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"change","value":5}}}`, `{"jsonrpc":"2.0","id":24,"error":{"code":-32602,"message":"invalid params: params.argument.value holds a number where a string is taken"}}`},
		{"25", `{"jsonrpc":"2.0","id":25,"method":"resources/subscribe","params":{"uri":[]}}`, `{"jsonrpc":"2.0","id":25,"error":{"code":-32602,"message":"invalid params: params.uri holds an array where a string is taken"}}`},
		// what a header cannot carry as the client wrote it
		{"14", `{"jsonrpc":"2.0","id":14,"method":" tools/list","params":{` + modern + `}}`, `{"jsonrpc":"2.0","id":14,"error":{"code":-32601,`},
		{"15", `{"jsonrpc":"2.0","id":15,"method":"tools/list\u0001","params":{` + modern + `}}`, `{"jsonrpc":"2.0","id":15,"error":{"code":-32601,`},
		{"16", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"` + strings.Repeat("x", 80000) + `",` + modern + `}}`, `{"jsonrpc":"2.0","id":16,"error":{"code":-32602,"message":"tool 'xxx`},
		{"17", `{"jsonrpc":"2.0","id":17,"method":"prompts/get","params":{"name":"` + strings.Repeat("é", 30000) + `",` + modern + `}}`, `{"jsonrpc":"2.0","id":17,"error":{"code":-32601,`},
		{"18", `{"jsonrpc":"2.0","id":18,"method":"resources/read","params":{"uri":"majordomus://` + strings.Repeat("y", 100000) + `",` + modern + `}}`, `{"jsonrpc":"2.0","id":18,"error":{"code":-32602,`},
		{"13", `{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{` + strings.ToLower(modern) + `}}`, `{"jsonrpc":"2.0","id":13,"result":{`},
	}
	compare := func(edges []edge) {
		for _, e := range edges {
			bridged.send(e.line)
			local.send(e.line)
			b, _ := bridged.answer(e.id)
			l, _ := local.answer(e.id)
			if b != l {
				t.Errorf("%s:\nbridged %s\nlocal   %s", e.line, b, l)
			}
			if !strings.HasPrefix(l, e.want) {
				t.Errorf("%s is answered %s, not %s…", e.line, l, e.want)
			}
		}
	}
	compare(early)
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	compare(late)
}

// A client that initializes again through a bridge leaves one session on
// the server, as in process, where its one session is initialized again.
func TestASecondInitializeThroughABridgeLeavesOneSession(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	bridged.open(initRoots)
	f.waitRegistered(t, 1)
	bridged.send(strings.Replace(initRoots, `"id":1`, `"id":2`, 1))
	if a, _ := bridged.answer("2"); !strings.Contains(a, `"result"`) {
		t.Fatalf("the second initialize: %s", a)
	}
	f.waitRegistered(t, 1)
	if a := bridged.call("3", "tools/list", ""); !strings.Contains(a, `"result"`) {
		t.Fatalf("after it: %s", a)
	}
}

// A second initialize the server refuses (params mcp-go cannot read)
// leaves the client initialized, as a local session stays: its next
// request is answered, not refused for want of a session, and it holds one
// session on the server.
func TestASecondInitializeRefusedLeavesTheClientsSessionAsItWas(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	for i, params := range []string{
		`{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"x","version":"1"}}`,
		`{"protocolVersion":"2025-06-18","capabilities":[],"clientInfo":{"name":"x","version":"1"}}`,
	} {
		id := fmt.Sprint(10 * (i + 1))
		for _, c := range []*stdioClient{bridged, local} {
			c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":` + params + `}`)
		}
		b, _ := bridged.answer(id)
		l, _ := local.answer(id)
		if b != l || !strings.Contains(l, `"error"`) {
			t.Fatalf("the initialize %s:\nbridged %s\nlocal   %s", params, b, l)
		}
		b = bridged.call(id+"1", "tools/list", "")
		l = local.call(id+"1", "tools/list", "")
		if b != l || !strings.Contains(l, `"result"`) {
			t.Fatalf("after the initialize %s, tools/list:\nbridged %s\nlocal   %s", params, b, l)
		}
		f.waitRegistered(t, 2) // the bridged session and the local one
	}
}

// A second initialize that no server answered (here one that lost its
// lease refuses it) is not the server's refusal of the client: the bridge
// moves on, and opens nothing again where it was just refused.
func TestASecondInitializeRefusedForALostLeaseIsNotSentAgain(t *testing.T) {
	serverLog, served := observer.New(zap.InfoLevel)
	var lost atomic.Bool
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(serverLog), Refusal: func() *httpserver.Refusal {
		if lost.Load() {
			return &httpserver.Refusal{Reason: "lease_lost", Message: "taken over", URL: "http://127.0.0.1:1"}
		}
		return nil
	}})
	bridgeLog, bridged := observer.New(zap.DebugLevel)
	streamOpen := make(chan struct{})
	var once sync.Once
	log := zap.New(bridgeLog, zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == "stream open" {
			once.Do(func() { close(streamOpen) })
		}
		return nil
	}))
	fo := &failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: s.url, Logger: log}))
	c.open(initRoots)
	select { // a stream opened after the loss would tell the bridge first
	case <-streamOpen:
	case <-time.After(10 * time.Second):
		t.Fatal("the bridge never opened its stream")
	}
	lost.Store(true)
	c.send(strings.Replace(initRoots, `"id":1`, `"id":2`, 1))
	if a, _ := c.answer("2"); !strings.Contains(a, `"result"`) {
		t.Fatalf("the second initialize, answered by what serves next: %s", a)
	}
	fo.next()
	if n, again := served.FilterMessage("a new session was refused").Len(), bridged.FilterMessageSnippet("could not be opened again").Len(); n != 1 || again != 0 {
		t.Errorf("the refusing server was asked %d times, and the bridge tried to open the session again %d times; want 1 and 0", n, again)
	}
}

// A notification is answered nothing, whatever its params hold (JSON-RPC
// answers no notification): mcp-go answers one whose params are not an
// object -32700 with a null id, which a client can match to no request.
func TestANotificationWithParamsNotAnObjectIsAnsweredNothing(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	notes := []string{
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":[1]}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}`,
		`{"jsonrpc":"2.0","method":"notifications/whatever","params":5}`,
		`[{"jsonrpc":"2.0","method":"notifications/whatever","params":true},{"jsonrpc":"2.0","id":"b","method":"ping"}]`,
	}
	for _, stage := range []string{"before initialize", "after it"} {
		for _, c := range []*stdioClient{bridged, local} {
			c.send(notes...)
			if a := c.call(`"p"`, "ping", ""); !strings.Contains(a, `"result"`) {
				t.Fatalf("%s, the ping after the notifications: %s", stage, a)
			}
			for _, f := range c.backlog {
				if strings.Contains(f, "-32700") || !strings.Contains(f, `"id":"b"`) {
					t.Errorf("%s, %T answered a notification: %s", stage, c.backend, f)
				}
			}
			c.backlog = nil
		}
		if stage == "before initialize" {
			for _, c := range []*stdioClient{bridged, local} {
				c.open(initRoots)
			}
		}
	}
}

// A second initialize written right behind other requests, and followed
// by more, without waiting for any answer: a bridged session answers each
// as a local one does, whose one session is initialized again under the
// requests in flight. None is refused for want of a session, and none
// names the server.
func TestASecondInitializeAmongRequestsInFlightIsAnsweredAsLocally(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for round := range 50 {
		id := func(n int) string { return fmt.Sprint(100*round + n) }
		lines := []string{
			`{"jsonrpc":"2.0","id":` + id(2) + `,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":` + id(3) + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + id(4) + `,"method":"resources/list"}`,
			strings.Replace(initRoots, `"id":1`, `"id":`+id(5), 1),
			initialized,
			`{"jsonrpc":"2.0","id":` + id(6) + `,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":` + id(7) + `,"method":"ping"}`,
		}
		for _, c := range []*stdioClient{bridged, local} {
			c.send(strings.Join(lines, "\n")) // at once: nothing waits for an answer
		}
		for n := 2; n <= 7; n++ {
			b, _ := bridged.answer(id(n))
			l, _ := local.answer(id(n))
			if !strings.Contains(l, `"result"`) {
				t.Fatalf("round %d: locally, %s is answered %s", round, id(n), l)
			}
			if b != l {
				t.Errorf("round %d, %s:\nbridged %s\nlocal   %s", round, id(n), b, l)
			}
			if strings.Contains(b, "http") || strings.Contains(b, "status") {
				t.Errorf("round %d: bridged, %s names the server: %s", round, id(n), b)
			}
		}
		f.waitRegistered(t, 2) // the bridged session and the local one
	}
}

// The window the requests above fall into by chance, held open: a call
// read before a second initialize (it waits for the tools the bridge asks
// for) reaches the relay while that initialize opens the new session. It
// waits for that session and is answered on it, as locally.
func TestACallReadBeforeASecondInitializeIsAnsweredOnTheSessionItOpens(t *testing.T) {
	f := newFixture()
	tools, reopening, reopen := make(chan struct{}), make(chan struct{}), make(chan struct{})
	f.hooks.AddBeforeListTools(func(_ context.Context, id any, _ *mcp.ListToolsRequest) {
		if fmt.Sprint(id) == "majordomus-bridge-tools" {
			<-tools
		}
	})
	var initializes atomic.Int32
	f.hooks.AddBeforeInitialize(func(context.Context, any, *mcp.InitializeRequest) {
		if initializes.Add(1) == 2 {
			close(reopening)
			<-reopen
		}
	})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	core, logs := observer.New(zapcore.DebugLevel)
	bridged := runStdio(t, bridgeTo(t, s.url, zap.New(core)))
	release := sync.OnceFunc(func() { close(reopen) })
	t.Cleanup(release) // before the loop's end is waited for
	bridged.open(initRoots)
	bridged.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":`+lookup("k")+`}`,
		strings.Replace(initRoots, `"id":1`, `"id":3`, 1))
	select {
	case <-reopening: // the old session is ended, the new one not yet open
	case <-time.After(wait):
		t.Fatal("the second initialize did not reach the server")
	}
	close(tools)
	for deadline := time.Now().Add(wait); logs.FilterMessage("a message waits for the session the client's initialize opens again").Len() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			a, _ := bridged.answer("2")
			t.Fatalf("the call did not wait for the new session; it was answered %s", a)
		}
	}
	release()
	bridged.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	for _, id := range []string{"2", "3", "4"} {
		if a, _ := bridged.answer(id); !strings.Contains(a, `"result"`) {
			t.Errorf("%s is answered %s", id, a)
		}
	}
}

// A byte order mark before the first line (some Windows shells write one
// when they pipe text) is not part of the first message.
func TestAByteOrderMarkBeforeTheFirstLineIsSkipped(t *testing.T) {
	f := newFixture()
	release := make(chan struct{})
	f.hooks.AddBeforeListTools(func(_ context.Context, id any, _ *mcp.ListToolsRequest) {
		if strings.HasPrefix(fmt.Sprint(id), "t") {
			<-release // held: the loop hands reading on to another goroutine
		}
	})
	for name, c := range map[string]*stdioClient{"local": runStdio(t, localTo(t, f)), "bridged": runStdio(t, bridgeTo(t, serveHTTP(t, httpserver.Config{MCP: f.srv}).url, nil))} {
		c.send("\uFEFF" + initRoots)
		if a, _ := c.answer("1"); !strings.Contains(a, `"result"`) {
			t.Errorf("%s: the initialize behind the mark is answered %s", name, a)
		}
		// only the first line's, whichever goroutine reads the line
		c.send(`{"jsonrpc":"2.0","id":"t","method":"tools/list"}`, "\uFEFF"+`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if a, _ := c.until(func(f string) bool { return strings.Contains(f, `"id":2,`) || strings.Contains(f, `"id":null`) }); !strings.Contains(a, "-32700") {
			t.Errorf("%s: a mark on a later line is answered %s", name, a)
		}
		release <- struct{}{}
		c.answer(`"t"`)
	}
}

// A request with its method or jsonrpc key given twice, one copy not a
// string, passes the stdio loop and the screen (the last copy wins there),
// though its envelope does not read (nor would mcp-go's, which answers
// -32700 with a null id): a bridged session answers it as a local one
// does, byte for byte, since its client waits on its id, alone or in a
// batch.
func TestARequestWithItsMethodTwiceIsAnsweredAsLocally(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	clients := []*stdioClient{runStdio(t, bridgeTo(t, s.url, nil)), runStdio(t, localTo(t, f))}
	var early []string // before initialize, where a ping is answered and the rest refused
	for _, c := range clients {
		c.send(`[{"jsonrpc":5,"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
		a, _ := c.until(func(f string) bool { return strings.Contains(f, `"id":3,`) })
		early = append(early, a)
		c.open(initRoots)
	}
	if want := `[{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: the method and jsonrpc are strings, each given once"}},{"jsonrpc":"2.0","id":3,"result":{}}]`; early[0] != want || early[1] != want {
		t.Errorf("before initialize: bridged %s, local %s", early[0], early[1])
	}
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"method":5,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":7,"method":"tools/list","method":5},{"jsonrpc":"2.0","id":8,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"","method":5}`,
		`{"jsonrpc":5,"jsonrpc":"2.0","id":7,"method":"ping"}`,
		`{"JSONRPC":5,"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		// a notification, or an answer, is answered nothing, whichever copy reads: the ping behind it is all
		`[{"jsonrpc":"2.0","method":5,"method":"notifications/cancelled","params":{"requestId":1}},{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
		`[{"jsonrpc":5,"jsonrpc":"2.0","id":7,"result":{}},{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
	} {
		var got []string
		for _, c := range clients {
			c.send(msg)
			a, _ := c.until(func(f string) bool { return strings.Contains(f, `"id":7,`) })
			got = append(got, a)
		}
		want := `"id":7,"error":{"code":-32600,"message":"invalid request: the method`
		if strings.Contains(msg, "notifications/") || strings.Contains(msg, `"result"`) {
			want = `[{"jsonrpc":"2.0","id":7,"result":{}}]`
		}
		if got[0] != got[1] || !strings.Contains(got[0], want) {
			t.Errorf("%s: bridged %s, local %s", msg, got[0], got[1])
		}
	}
}

// A request refused whole — over the size limit, or in a batch no server
// takes — whose id is null or neither a string nor a number is answered
// as Screen answers such a request within the limit: -32600 with id null
// (JSON-RPC: an id that cannot be told is answered null), never with that
// id echoed, which is no JSON-RPC response, nor with nothing. So is a
// member of such a message that is not an object. Bridged as local.
func TestARequestRefusedWholeWithAnUnusableIDIsAnsweredWithIDNull(t *testing.T) {
	f := newFixture()
	pad := strings.Repeat("x", 1<<20)
	const init = `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for name, c := range map[string]*stdioClient{"local": runStdio(t, localTo(t, f)), "bridged": runStdio(t, bridgeTo(t, serveHTTP(t, httpserver.Config{MCP: f.srv}).url, nil))} {
		c.open(initRoots)
		for _, tc := range []struct{ line, want string }{
			{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping","params":{"pad":"` + pad + `"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is `},
			{`{"jsonrpc":"2.0","id":true,"method":"ping","params":{"pad":"` + pad + `"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
			{`{"jsonrpc":"2.0","id":null,"method":"ping","params":{"pad":"` + pad + `"}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
			{`[{"jsonrpc":"2.0","id":[1],"method":"ping","params":{"pad":"` + pad + `"}},7]`, `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,`},
			{`[{"jsonrpc":"2.0","id":{"a":1},"method":"ping"},` + init + `]`, `[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: initialize must be sent alone`},
		} {
			c.send(tc.line, `{"jsonrpc":"2.0","id":"fence","method":"ping"}`)
			_, before := c.answer(`"fence"`)
			if len(before) == 0 { // the fence was read beside it, as it took over a millisecond (stdio.readHandOff)
				answer, _ := c.until(func(string) bool { return true })
				before = []string{answer}
			}
			c.backlog = nil
			if len(before) != 1 || !strings.HasPrefix(before[0], tc.want) {
				t.Errorf("%s: %.80s… is answered %.300q, want %s…", name, tc.line, before, tc.want)
			}
		}
	}
}
