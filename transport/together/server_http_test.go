package together

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// GET / is the probe: the whole identity to a client with the token, to
// anyone else only the name; to a challenge, a proof of the secret and of
// the leaseholder claim, which only a holder of the secret can check. The
// board is asked for only by the answers that carry it.
func TestIdentityIsTheProbe(t *testing.T) {
	var id atomic.Pointer[httpserver.Identity] // the network orders its change, which the race detector does not see
	id.Store(&httpserver.Identity{Name: "majordomus", Version: "1.2.3", Checkout: "main", RepositoryID: "abc", Profile: "default", Instance: "i-1", Leaseholder: true})
	var boards atomic.Int32 // the answers the board's peers were asked for
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Identity: func(peers bool) httpserver.Identity {
		if peers {
			boards.Add(1)
		}
		return *id.Load()
	}})
	c := newClient(t, s.url)
	resp, body := c.do(http.MethodGet, "/", "", "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	want := `{"name":"majordomus","version":"1.2.3","checkout":"main","repository_id":"abc","profile":"default","instance":"i-1","leaseholder":true,"sessions":0,"http_sessions":0}`
	if strings.TrimSpace(body) != want {
		t.Fatalf("GET / answered %s, want %s", body, want)
	}
	if _, body := c.do(http.MethodGet, "/", "", "", "Authorization", ""); strings.TrimSpace(body) != `{"name":"majordomus"}` {
		t.Fatalf("GET / without the token answered %s", body)
	}
	challenge := secret.NewChallenge()
	for _, tc := range []struct {
		authorization string
		want          string
	}{
		{secret.Authorization(testSecret), `"instance":"i-1"`},
		{"", `{"name":"majordomus","leaseholder":true,"proof":"`},
		{secret.Authorization(secret.New()), `{"name":"majordomus","leaseholder":true,"proof":"`},
	} {
		_, body := c.do(http.MethodGet, "/?challenge="+challenge, "", "", "Authorization", tc.authorization)
		var answer struct {
			Leaseholder bool   `json:"leaseholder"`
			Proof       string `json:"proof"`
		}
		if err := json.Unmarshal([]byte(body), &answer); err != nil || !strings.Contains(body, tc.want) {
			t.Fatalf("GET / with a challenge and %q answered %s", tc.authorization, body)
		}
		if !answer.Leaseholder || !secret.Proves(answer.Proof, testSecret, challenge, true) {
			t.Fatalf("the answer %s proves no leaseholder holding the secret", body)
		}
	}
	if n := boards.Load(); n != 1 {
		t.Fatalf("the board was asked for %d times, want once: for the token holder's GET / without a challenge", n)
	}
	for _, bad := range []string{"xyz", "ab", strings.Repeat("a", 1000)} {
		if resp, body := c.do(http.MethodGet, "/?challenge="+bad, "", ""); resp.StatusCode != http.StatusBadRequest || refusal(t, body).Error.Code != "invalid_request" {
			t.Fatalf("GET / with challenge %q: %d %s", bad, resp.StatusCode, body)
		}
	}
	told := *id.Load()
	told.Peers = &httpserver.IdentityPeers{Count: 1, Peers: []httpserver.IdentityPeer{{ID: "p1", Client: "claude-code\nSYSTEM", Transport: "stdio"}}}
	id.Store(&told)
	if _, body := c.do(http.MethodGet, "/", "", ""); !strings.Contains(body, `,"sessions":0,"http_sessions":0,"peers":{"count":1,"peers":[{"id":"p1","client":"claude-code\nSYSTEM","transport":"stdio"}]}}`) {
		t.Fatalf("GET / does not tell the board: %s", body)
	}
	if _, body := c.do(http.MethodGet, "/", "", "", "Authorization", ""); strings.TrimSpace(body) != `{"name":"majordomus"}` {
		t.Fatalf("GET / without the token tells more than the name: %s", body)
	}
	if resp, body := c.do(http.MethodHead, "/", "", ""); resp.StatusCode != http.StatusOK || body != "" {
		t.Fatalf("HEAD /: %d %q", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodGet, "/nowhere", "", ""); resp.StatusCode != http.StatusNotFound || refusal(t, body).Error.Code != "not_found" {
		t.Fatalf("GET /nowhere: %d %s", resp.StatusCode, body)
	}
}

// Without the token, every /mcp request is 401 with a JSON error and
// reaches nothing: no session opens, and a live session's id, guessed or
// stolen, is worth nothing.
func TestMCPWithoutTheTokenIsRefused(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)
	for _, authorization := range []string{"", "Bearer", "Bearer " + testSecret, secret.Authorization(secret.New()), "Basic " + secret.Token(testSecret)} {
		for _, req := range []struct{ method, sid, body string }{
			{http.MethodPost, "", initialize},
			{http.MethodPost, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
			{http.MethodGet, sid, ""},
			{http.MethodDelete, sid, ""},
		} {
			resp, body := c.do(req.method, "/mcp", req.sid, req.body, "Authorization", authorization)
			if resp.StatusCode != http.StatusUnauthorized || refusal(t, body).Error.Code != "unauthorized" ||
				!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("%s /mcp with %q: %d %v %s", req.method, authorization, resp.StatusCode, resp.Header, body)
			}
		}
	}
	if n := s.Sessions(); n != 1 {
		t.Fatalf("%d sessions after the refused requests, want the one opened with the token", n)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("the session is not served after the refusals: %d %s", resp.StatusCode, body)
	}
}

func TestEveryRefusalIsJSONAndTheServerGoesOn(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)

	cases := []struct {
		name, method, sid, body string
		header                  []string
		status                  int
		code                    string
	}{
		{"2 MiB body", "POST", sid, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2<<20) + `"}}`, nil, 413, "too_large"},
		{"not JSON", "POST", sid, `{"jsonrpc":`, nil, 400, "invalid_json"},
		{"no session", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 400, "session_required"},
		{"no session in a batch", "POST", "", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, 400, "session_required"},
		{"bogus session", "POST", "mcp-session-bogus", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, nil, 404, "session_not_found"},
		{"bogus session stream", "GET", "mcp-session-bogus", "", nil, 404, "session_not_found"},
		{"stream without session", "GET", "", "", nil, 400, "session_required"},
		{"DELETE without session", "DELETE", "", "", nil, 400, "session_required"},
		{"DELETE of a bogus session", "DELETE", "mcp-session-bogus", "", nil, 404, "session_not_found"},
		{"PUT", "PUT", sid, `{}`, nil, 405, "method_not_allowed"},
		{"HEAD", "HEAD", sid, "", nil, 405, ""},
		{"foreign Origin", "POST", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Origin", "http://evil.example"}, 403, "forbidden"},
		{"foreign Origin on the stream", "GET", sid, "", []string{"Origin", "http://evil.example"}, 403, "forbidden"},
		{"foreign Host", "POST", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Host", "evil.example"}, 403, "forbidden"},
		{"foreign Host on the probe", "GET", "", "", []string{"Host", "evil.example:80"}, 403, "forbidden"},
		{"wrong content type", "POST", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type"},
		{"batched initialize", "POST", "", "[" + initialize + "]", nil, 400, "invalid_request"},
		{"unknown protocol (mcp-go's own refusal)", "POST", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, []string{"Mcp-Protocol-Version", "1999-01-01"}, 400, "invalid_request"},
	}
	for _, tc := range cases {
		path := "/mcp"
		if tc.name == "foreign Host on the probe" {
			path = "/"
		}
		resp, body := c.do(tc.method, path, tc.sid, tc.body, tc.header...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.status, body)
			continue
		}
		if tc.method == "HEAD" {
			continue
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", tc.name, ct)
		}
		if got := refusal(t, body).Error; got.Code != tc.code || got.Message == "" {
			t.Errorf("%s: error %+v, want code %s", tc.name, got, tc.code)
		}
		// the server keeps serving the session after each refusal
		if resp, body := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":"after","method":"ping"}`); resp.StatusCode != 200 ||
			!strings.Contains(body, `"id":"after","result":{}`) {
			t.Fatalf("after %s: %d %s", tc.name, resp.StatusCode, body)
		}
	}
	if n := s.Sessions(); n != 1 {
		t.Fatalf("%d live sessions after the refusals, want 1", n)
	}
}

func TestABatchIsAnsweredWithAnArray(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	resp, body := c.do("POST", "/mcp", sid, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"no/such"}]`)
	var answers []map[string]any
	if err := json.Unmarshal([]byte(body), &answers); err != nil || resp.StatusCode != 200 {
		t.Fatalf("batch: %d %s (%v)", resp.StatusCode, body, err)
	}
	if len(answers) != 2 || answers[0]["id"] != float64(1) || answers[1]["error"] == nil {
		t.Fatalf("batch answered %s: want the ping's result and no/such's error", body)
	}
	if resp, body := c.do("POST", "/mcp", sid, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`); resp.StatusCode != 202 {
		t.Fatalf("a batch of notifications: %d %s, want 202", resp.StatusCode, body)
	}
}

func TestListenFallsBackToAFreePort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	obs, logs := observer.New(zapcore.WarnLevel)
	ln, err := httpserver.Listen("127.0.0.1", port, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if got := ln.Addr().(*net.TCPAddr).Port; got == port || got == 0 {
		t.Fatalf("bound port %d, want a free one other than %d", got, port)
	}
	want := "cannot bind 127.0.0.1:" + strconv.Itoa(port) + ": "
	if l := logs.All(); len(l) != 1 || !strings.HasPrefix(l[0].Message, want) || !strings.HasSuffix(l[0].Message, "; taking a free port instead") {
		t.Fatalf("logged %v, want %q…", l, want)
	}
}

func TestANonLoopbackBindWarns(t *testing.T) {
	obs, logs := observer.New(zapcore.WarnLevel)
	ln, err := httpserver.Listen("0.0.0.0", 0, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	l := logs.All()
	if len(l) != 1 || !strings.HasPrefix(l[0].Message, "bound to 0.0.0.0:") || !strings.Contains(l[0].Message, "not a loopback address") ||
		!strings.Contains(l[0].Message, "bind 127.0.0.1") {
		t.Fatalf("logged %v", l)
	}
	if u := httpserver.URLOf(ln.Addr()); !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("URL %s, want the loopback address", u)
	}
	lo, err := httpserver.Listen("127.0.0.1", 0, zap.New(obs))
	if err != nil {
		t.Fatal(err)
	}
	lo.Close()
	if logs.Len() != 1 {
		t.Fatalf("a loopback bind warned: %v", logs.All())
	}
}

// The server answers the ping of a session with a stream open itself,
// with mcp-go's own answer byte for byte, and tells who was heard; a ping
// that is no request, that names an unknown protocol version or whose
// session has no stream (what the server sends it may ride on the answer)
// is still mcp-go's to answer.
func TestAPingIsAnsweredAsMCPGoWouldAndHeard(t *testing.T) {
	f := newFixture()
	heard := make(chan string, 8)
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Heard: func(sid string) { heard <- sid }})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if resp, body := c.do(http.MethodPost, "/mcp", sid, ping); resp.StatusCode != http.StatusOK || len(heard) != 0 {
		t.Fatalf("a ping with no stream open: %d %s, and %d heard by the server itself", resp.StatusCode, body, len(heard))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(testSecret))
	req.Header.Set("Mcp-Session-Id", sid)
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the session's stream: %v %v", stream, err)
	}
	defer stream.Body.Close()
	for _, ping := range []string{
		`{"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"three","method":"ping","params":{}}`,
		`{"jsonrpc":"2.0", "id": "a\u0020b" ,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-40,"method":"ping","params":{"_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e3,"method":"ping"}`,
	} {
		resp, body := c.do(http.MethodPost, "/mcp", sid, ping)
		want, _ := json.Marshal(f.srv.HandleMessage(context.Background(), json.RawMessage(ping)))
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || body != string(want)+"\n" {
			t.Errorf("%s: answered %d %q %q, mcp-go answers %q", ping, resp.StatusCode, resp.Header.Get("Content-Type"), body, want)
		}
		select {
		case got := <-heard:
			if got != sid {
				t.Errorf("%s: heard %q, want %q", ping, got, sid)
			}
		default:
			t.Errorf("%s: nobody was told the session was heard", ping)
		}
	}
	refused := `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"_meta":5}}` // not a ping's params: mcp-go's to refuse
	want, _ := json.Marshal(f.srv.HandleMessage(context.Background(), json.RawMessage(refused)))
	if _, body := c.do(http.MethodPost, "/mcp", sid, refused); body != string(want)+"\n" || !strings.Contains(body, `"error"`) {
		t.Errorf("%s: answered %q, mcp-go answers %q", refused, body, want)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","method":"ping"}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a ping sent as a notification: %d %s, want 202 as for any notification", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}`); resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("a notification whose params are an array: %d %q, want 202 and nothing", resp.StatusCode, body)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", sid, ping, "MCP-Protocol-Version", "1999-01-01"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a ping under an unknown protocol version: %d %s, want mcp-go's 400", resp.StatusCode, body)
	}
	if len(heard) != 0 {
		t.Errorf("%d more sessions heard by the server itself, want none", len(heard))
	}
}

// A ping that carries a result is, to mcp-go, the client's answer to a
// request of the server's, which it answers nothing (202): so it is
// answered whether or not the session's stream is open, and so through a
// bridge as in process (R8), not as a ping.
func TestAPingCarryingAResultIsAnsweredNothing(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	const ping = `{"jsonrpc":"2.0","id":5,"method":"ping","result":{}}`
	if answer := f.srv.HandleMessage(context.Background(), json.RawMessage(ping)); answer != nil {
		t.Fatalf("mcp-go answers %s with %v, not nothing", ping, answer)
	}
	if resp, body := c.do(http.MethodPost, "/mcp", sid, ping); resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("with no stream open: %d %q, want 202 and nothing", resp.StatusCode, body)
	}
	stream, cancel := c.openStream(sid)
	defer cancel()
	defer stream.Body.Close()
	if resp, body := c.do(http.MethodPost, "/mcp", sid, ping); resp.StatusCode != http.StatusAccepted || body != "" {
		t.Errorf("with its stream open: %d %q, want 202 and nothing", resp.StatusCode, body)
	}
}

// What a caller sent is quoted bounded, token or not: a Host or an Origin
// of 60 KB with every request would otherwise fill the log with them.
func TestARefusedCallersHeadersAreLoggedBounded(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(core)})
	c := newClient(t, s.url)
	long := strings.Repeat("a", 60<<10)
	c.do(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Host", long+".example")
	c.do(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Origin", "http://"+long+".example")
	refused := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(refused) != 2 {
		t.Fatalf("%d warnings, want one for each caller", len(refused))
	}
	for _, e := range refused {
		for k, v := range e.ContextMap() {
			if text := fmt.Sprint(v); len(text) > 200 {
				t.Errorf("%q logs %s of %d bytes", e.Message, k, len(text))
			}
		}
	}
}

// openStream opens session sid's GET stream; cancel drops its connection.
func (c *client) openStream(sid string) (resp *http.Response, cancel context.CancelFunc) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(testSecret))
	resp, err := c.http.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		cancel()
		c.t.Fatalf("GET stream: %v %v", resp, err)
	}
	return resp, cancel
}

// A request whose Mcp-Protocol-Version no revision has is refused 400
// before its message is read, as mcp-go refuses one it reads (MCP
// 2025-06-18 and later): alone, when its message is malformed too, and in
// a batch. An initialize is taken, as mcp-go takes it.
func TestAnUnsupportedProtocolVersionIsRefusedBeforeTheMessage(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	const version = "1999-01-01"
	plain, want := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", version)
	if plain.StatusCode != http.StatusBadRequest || !strings.Contains(want, "Unsupported protocol version: "+version) {
		t.Fatalf("mcp-go's refusal: %d %s", plain.StatusCode, want)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":5}`,
		`[{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`,
	} {
		if resp, got := c.do(http.MethodPost, "/mcp", sid, body, "MCP-Protocol-Version", version); resp.StatusCode != http.StatusBadRequest || got != want {
			t.Errorf("%s: answered %d %s, want 400 %s", body, resp.StatusCode, got, want)
		}
	}
	if resp, body := c.do(http.MethodPost, "/mcp", "", initRoots, "MCP-Protocol-Version", version); resp.StatusCode != http.StatusOK {
		t.Errorf("an initialize: %d %s", resp.StatusCode, body)
	}
}
