package together

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// modernRequest is a 2026-07-28 request: its revision, capabilities and
// identity in _meta.
func modernRequest(id int, method, params string) string {
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = "{" + meta + "," + strings.TrimPrefix(params, "{")
	}
	b, _ := json.Marshal(id)
	return `{"jsonrpc":"2.0","id":` + string(b) + `,"method":"` + method + `","params":` + params + `}`
}

// modernHeaders are the headers 2026-07-28 asks of a POST.
func modernHeaders(method, name string) []string {
	h := []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// A 2026-07-28 request is served on no session, with the revision's own
// checks; GET and DELETE are not part of it; a server that lost its lease
// refuses it in that revision's code range; an open listen stream counts as
// a session while it lasts.
func TestAModernRequestIsServedWithoutASession(t *testing.T) {
	var refused atomic.Pointer[httpserver.Refusal] // the network orders its change, which the race detector does not see
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Refusal: refused.Load})
	c := newClient(t, s.url)

	resp, body := c.do(http.MethodPost, "/mcp", "", modernRequest(1, "server/discover", ""), modernHeaders("server/discover", "")...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"2026-07-28"`) || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("server/discover: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", "", modernRequest(2, "tools/list", ""), modernHeaders("tools/list", "")...); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", "", modernRequest(3, "tools/list", ""), "Mcp-Protocol-Version", "2026-07-28"); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"jsonrpc":"2.0"`) {
		t.Fatalf("without Mcp-Method: %d %s", resp.StatusCode, body)
	}
	// the mark a bridge sends instead of names no header carries is heeded
	// only where no name header came: it never excuses a mismatch
	mismatched := append(modernHeaders("tools/list", ""), "Majordomus-Names-In-Body", "1")
	if resp, body := c.do(http.MethodPost, "/mcp", "", modernRequest(5, "tools/call", `{"name":"majordomus_list"}`), mismatched...); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "-32020") {
		t.Fatalf("a mismatched Mcp-Method with the mark: %d %s", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", "", modernRequest(6, "tools/list", ""), "Mcp-Protocol-Version", "2026-07-28", "Majordomus-Names-In-Body", "1"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("the mark alone: %d %s", resp.StatusCode, body)
	}
	if resp, _ := c.do(http.MethodGet, "/mcp", "", "", "Mcp-Protocol-Version", "2026-07-28"); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", "", "["+modernRequest(4, "tools/list", "")+"]", modernHeaders("tools/list", "")...); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a batch: %d %s", resp.StatusCode, body)
	}
	if n := s.Sessions(); n != 0 {
		t.Fatalf("%d sessions after modern requests", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	listening := make(chan struct{})
	var ended atomic.Value // how the listen request ended, told if the test fails
	t.Cleanup(func() {
		if t.Failed() {
			cancel()
			<-listening
			t.Logf("the listen request ended: %v", ended.Load())
		}
	})
	go func() {
		defer close(listening)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp",
			strings.NewReader(modernRequest(5, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", secret.Authorization(testSecret))
		for k, v := range map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"} {
			req.Header.Set(k, v)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			ended.Store(err.Error())
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ended.Store(resp.Status + " " + string(b))
	}()
	s.count.waitFor(t, 1)
	cancel()
	<-listening
	s.count.waitFor(t, 0)

	refused.Store(&httpserver.Refusal{Message: "this server lost its lease", URL: "http://127.0.0.1:1"})
	_, body = c.do(http.MethodPost, "/mcp", "", modernRequest(6, "tools/list", ""), modernHeaders("tools/list", "")...)
	var answer struct {
		Error struct {
			Code int
			Data struct{ Reason, URL string }
		}
	}
	if json.Unmarshal([]byte(body), &answer) != nil || answer.Error.Code != wire.CodeLeaseLostModern || answer.Error.Data.Reason != wire.ErrCodeLeaseLost ||
		answer.Error.Code >= -32019 && answer.Error.Code <= -32000 {
		t.Fatalf("a lease-lost server answered %s", body)
	}
}

// A 2026-07-28 client gets the same bytes through a bridge as served in
// process: answers, and errors whatever HTTP status carries them; the
// bridge sends the revision's headers and the client's peer id, and opens
// no session.
func TestAModernClientGetsTheSameBytesThroughABridge(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	var drawn int
	bridged := runStdio(t, func(out *wire.FrameWriter) wire.Backend {
		b, err := bridge.New(context.Background(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: out,
			NewPeer: func() string { drawn++; return "p7" }})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
	local := runStdio(t, localTo(t, f))
	for i, r := range []struct{ method, params string }{
		{"server/discover", ""},
		{"tools/list", ""},
		{"resources/list", ""},
		{"resources/read", `{"uri":"fixture://a"}`},
		{"tools/call", lookup("same")},
		{"tools/call", `{"name":"confirm"}`}, // input_required: a multi round-trip
		{"tools/call", `{"name":"confirm","requestState":"asked-once","inputResponses":{"sure":{"action":"accept","content":{}}}}`},
		{"no/such", ""},                         // 404 over HTTP
		{"resources/read", `{"uri":"nope://"}`}, // an error result
		{"ping", ""},                            // removed in 2026-07-28
		// 300 KiB of code-like text, which a bridge that escaped <, > and
		// & re-encoding it took past the server's 1 MiB
		{"tools/call", lookup(strings.Repeat("a<b&c>", 300<<10/6))},
		// keys a decoder reads in any case, the last kept, which a bridge
		// that re-encoded them in its own order read otherwise
		{`tools/call","Method":"tools/list`, `{"name":"confirm"}`},
		{"tools/call", `{"name":"confirm","Name":"lookup"}`},
		// a message of the size limit, which a bridge that added the
		// client's peer id to it took past the limit
		{"tools/call", ""},
	} {
		id := strconv.Itoa(i + 1)
		line := modernRequest(i+1, r.method, r.params)
		if r.params == "" && r.method == "tools/call" {
			line = modernRequest(i+1, r.method, lookup(strings.Repeat("x", wire.MaxMessageBytes-len(modernRequest(i+1, r.method, lookup(""))))))
		}
		bridged.send(line)
		b, _ := bridged.answer(id)
		local.send(line)
		l, _ := local.answer(id)
		if b != l {
			t.Errorf("%s:\nbridged %.300s\nlocal   %.300s", r.method, b, l)
		}
	}
	if drawn != 1 {
		t.Errorf("the peer id was drawn %d times, want once", drawn)
	}
	// Sessions() would count the bridge's presence too, a listen this
	// fixture (no prompts capability) ends at once and the bridge opens
	// again: only the in-process session is registered, and no HTTP one.
	if n := f.registered(); n != 1 {
		t.Errorf("%d sessions registered with the server; the bridge opened %d for a modern client", n, n-1)
	}
}

// A 2026-07-28 client's subscriptions/listen is relayed while it lasts:
// what the server broadcasts reaches the client through it, it counts as
// a session on the server, and the client's notifications/cancelled closes
// it, answered with nothing; the client's other requests go on meanwhile.
func TestAModernListenIsRelayedUntilTheClientCancelsIt(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := runStdio(t, bridgeTo(t, s.url, nil))
	c.send(modernRequest(1, "subscriptions/listen", `{"notifications":{"resourcesListChanged":true}}`))
	s.count.waitFor(t, 1)
	listChanged(t, f, c)
	c.send(modernRequest(2, "tools/list", ""))
	if a, _ := c.answer("2"); !strings.Contains(a, `"tools"`) {
		t.Fatalf("tools/list while listening: %s", a)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	s.count.waitFor(t, 0)
	c.send(modernRequest(3, "tools/list", ""))
	_, before := c.answer("3")
	for _, f := range append(before, c.backlog...) {
		if strings.Contains(f, `"id":1,`) {
			t.Fatalf("the cancelled listen was answered: %s", f)
		}
	}
}

// Shutdown ends a 2026-07-28 listen as it ends a session's stream: it does
// not wait for its client to leave (every bridged 2026-07-28 client keeps
// one open while it lives).
func TestShutdownEndsAModernListen(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := runStdio(t, bridgeTo(t, s.url, nil))
	c.send(modernRequest(1, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`))
	s.count.waitFor(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a listen open: %v", err)
	}
}

// openListen opens a 2026-07-28 listen of id (its JSON) on s, ended when
// the test ends, and returns its answer: a stream, when it is admitted.
func openListen(t *testing.T, s *served, id string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	body := strings.Replace(modernRequest(0, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`), `"id":0`, `"id":`+id, 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(testSecret))
	for _, h := range [][2]string{{"Mcp-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "subscriptions/listen"}} {
		req.Header.Set(h[0], h[1])
	}
	resp, err := (&http.Client{Transport: &http.Transport{}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// A 2026-07-28 listen stream that carries nothing carries a comment after
// each ListenKeepAlive, that revision's liveness for a client that only
// listens; the events it does carry are whole between them.
func TestASilentModernListenIsKeptAlive(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, ListenKeepAlive: 20 * time.Millisecond})
	resp := openListen(t, s, "1")
	if resp.StatusCode != http.StatusOK || !wire.IsEventStream(resp.Header) {
		t.Fatalf("the listen: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	defer time.AfterFunc(wait, func() { resp.Body.Close() }).Stop() // the cap of the wait
	lines := bufio.NewReader(resp.Body)
	var events []string
	for comments := 0; comments < 2; {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v (events %q)", err, events)
		}
		switch {
		case line == ": keep-alive\n":
			comments++
		case strings.HasPrefix(line, "data: "):
			events = append(events, line)
		}
	}
	if len(events) != 1 || !strings.Contains(events[0], "subscriptions/acknowledged") {
		t.Fatalf("the events before the comments: %q", events)
	}
}

// A 2026-07-28 listen counts as a session, and so is held to the cap: at
// MaxSessions another is refused as an initialize is (503, full). A
// bridge's presence takes no place: its client's own listen has one.
func TestAModernListenIsHeldToTheSessionCap(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 2, PresenceID: bridge.PresenceID})
	for _, id := range []string{strconv.Quote(bridge.PresenceID), "1", "2"} {
		if resp := openListen(t, s, id); resp.StatusCode != http.StatusOK {
			t.Fatalf("listen %s under the cap: %d", id, resp.StatusCode)
		}
	}
	s.count.waitFor(t, 3)
	if resp := openListen(t, s, "3"); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a listen past the cap: %d", resp.StatusCode) // its body, when admitted, is a stream
	}
	if n := s.Sessions(); n != 3 {
		t.Fatalf("%d sessions counted; want the two listens and the presence", n)
	}
}

// A probe's sealed identity carries the greeting while the server has a
// place left for the session it promises, a bridge's presence taking
// none, and not once it is full: then it says it is full, so that a
// client served alone does not try to attach.
func TestAProbeGreetsWhileAPlaceIsLeft(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 1, PresenceID: bridge.PresenceID,
		Greeting: func() any { return "welcome" }, Identity: func(bool) httpserver.Identity { return httpserver.Identity{Leaseholder: true} }})
	var full bool
	greeted := func() bool {
		whole, conn, err := secret.ProbeSealed(context.Background(), s.url, testSecret, testProbe)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		var id struct {
			Greeting any
			Full     bool
		}
		full = json.Unmarshal(whole, &id) == nil && id.Full
		return id.Greeting == "welcome"
	}
	if resp := openListen(t, s, strconv.Quote(bridge.PresenceID)); resp.StatusCode != http.StatusOK {
		t.Fatalf("a presence: %d", resp.StatusCode)
	}
	s.count.waitFor(t, 1)
	if !greeted() {
		t.Fatal("with a presence open and a place left, the probe carries no greeting")
	}
	newClient(t, s.url).initialize()
	s.count.waitFor(t, 2)
	if greeted() || !full {
		t.Fatalf("at the cap, the probe carries the greeting of a session that would be refused, or does not say it is full (%v)", full)
	}
}

// A session takes one place from its initialize on: while its opening is
// being reported, with a cap of 2, another is admitted and a probe greets.
func TestASessionBeingOpenedTakesOnePlace(t *testing.T) {
	reporting, goOn := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 2,
		Greeting: func() any { return "welcome" }, Identity: func(bool) httpserver.Identity { return httpserver.Identity{Leaseholder: true} },
		OnSessions: func(n int) {
			if n == 1 {
				once.Do(func() { close(reporting); <-goOn })
			}
		}})
	opened := make(chan struct{})
	go func() { defer close(opened); newClient(t, s.url).do(http.MethodPost, "/mcp", "", initRoots) }()
	<-reporting
	whole, conn, err := secret.ProbeSealed(context.Background(), s.url, testSecret, testProbe)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	var id struct{ Greeting any }
	_ = json.Unmarshal(whole, &id)
	resp, _ := newClient(t, s.url).do(http.MethodPost, "/mcp", "", initRoots)
	close(goOn)
	<-opened
	if id.Greeting != "welcome" || resp.StatusCode != http.StatusOK {
		t.Fatalf("with one session being opened and a cap of 2: greeting %v, another initialize %d", id.Greeting, resp.StatusCode)
	}
}

// A 2026-07-28 listen's acknowledgement is the first message its client
// hears of it, before the listen's answer, in process as over HTTP: one
// that asks to hear nothing is answered at once, and its acknowledgement
// comes first all the same.
func TestAModernListensAcknowledgementComesBeforeItsAnswer(t *testing.T) {
	f := newFixture()
	local := runStdio(t, localTo(t, f))
	for i, filter := range []string{`{"notifications":{}}`, `{"notifications":{"toolsListChanged":false}}`, `{"notifications":{}}`, `{"notifications":{"promptsListChanged":false}}`, `{"notifications":{}}`} {
		id := fmt.Sprint(i + 1)
		local.send(modernRequest(i+1, "subscriptions/listen", filter))
		_, before := local.answer(id)
		acknowledged := false
		for _, frame := range before {
			acknowledged = acknowledged || strings.Contains(frame, `"notifications/subscriptions/acknowledged"`) && strings.Contains(frame, `"io.modelcontextprotocol/subscriptionId":`+id)
		}
		if !acknowledged {
			t.Errorf("listen %s %s: answered before its acknowledgement (heard before it: %q)", id, filter, before)
		}
	}
}

// A 2026-07-28 request belongs to no session, so a notifications/cancelled
// of that revision POSTed by one client never cancels another client's call
// that happens to carry the same id (over HTTP, that revision cancels a
// request by closing its stream, which is whose it is).
func TestAModernCancellationCancelsNoOtherClientsCall(t *testing.T) {
	f := newFixture()
	calls, release := make(chan context.Context, 1), make(chan struct{})
	f.srv.AddTool(mcp.NewTool("hang", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls <- ctx
			select {
			case <-ctx.Done():
			case <-release:
			}
			return mcp.NewToolResultText("hung"), nil
		})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	a, b := newClient(t, s.url), newClient(t, s.url)
	answered := make(chan string, 1)
	go func() {
		_, body := a.do(http.MethodPost, "/mcp", "", modernRequest(7, "tools/call", `{"name":"hang"}`), modernHeaders("tools/call", "hang")...)
		answered <- body
	}()
	ctx := <-calls
	cancel := strings.Replace(modernRequest(0, "notifications/cancelled", `{"requestId":7}`), `"id":0,`, "", 1)
	if resp, body := b.do(http.MethodPost, "/mcp", "", cancel, modernHeaders("notifications/cancelled", "")...); resp.StatusCode != http.StatusAccepted {
		t.Errorf("another client's notifications/cancelled was answered %d %s, want 202", resp.StatusCode, body)
	}
	// mcp-go handles a notification before it answers 202: any cancelling is done
	if err := ctx.Err(); err != nil {
		t.Errorf("another client's notifications/cancelled cancelled this client's call: %v", err)
	}
	close(release)
	if body := <-answered; !strings.Contains(body, `"hung"`) {
		t.Errorf("the call was answered %s", body)
	}
}

// Of the 2026-07-28 requests a server that lost its lease is sent, only a
// bridge's presence (a listen of its id) is served: a call that borrows
// the id is refused, as every other is, and runs on the current server.
func TestOnlyAPresenceIsServedOnceTheLeaseIsLost(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, PresenceID: bridge.PresenceID,
		Refusal: func() *httpserver.Refusal { return &httpserver.Refusal{} }})
	borrowed := strings.Replace(modernRequest(1, "tools/list", ""), `"id":1,`, `"id":`+strconv.Quote(bridge.PresenceID)+`,`, 1)
	resp, body := newClient(t, s.url).do(http.MethodPost, "/mcp", "", borrowed, modernHeaders("tools/list", "")...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, strconv.Itoa(wire.CodeLeaseLostModern)) {
		t.Fatalf("a tools/list with the presence's id, on a server that lost its lease: %d %s", resp.StatusCode, body)
	}
}

// A cap of sessions set below the default lowers no cap of connections: a
// bridge's presence takes no place and is bounded by the connections
// alone, so under --max-sessions 1 four bridges' presences held every
// connection, and a newcomer's probe was closed as it connected. Its
// client, hearing nothing from a live server whose owner is alive, judges
// the lease busy, and takes it over at the busy grace.
func TestALoweredSessionsCapKeepsNoProbeOut(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 1, PresenceID: bridge.PresenceID,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Leaseholder: true} }})
	for i := range 4 {
		if resp := openListen(t, s, strconv.Quote(bridge.PresenceID)); resp.StatusCode != http.StatusOK {
			t.Fatalf("presence %d under the cap: %d", i, resp.StatusCode)
		}
	}
	s.count.waitFor(t, 4)
	_, conn, err := secret.ProbeSealed(context.Background(), s.url, testSecret, testProbe)
	if err != nil {
		t.Fatalf("with four bridges' presences open under a cap of one session, a newcomer's probe: %v", err)
	}
	conn.Close()
}
