package together

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

func TestDeleteEndsTheSession(t *testing.T) {
	f := newFixture()
	obs, logs := observer.New(zapcore.InfoLevel)
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Logger: zap.New(obs)})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)
	if resp, body := c.do("DELETE", "/mcp", sid, ""); resp.StatusCode != 200 && resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	s.count.waitFor(t, 0)
	f.waitRegistered(t, 0) // mcp-go unregisters it too
	if resp, body := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != 404 || refusal(t, body).Error.Code != "session_not_found" {
		t.Fatalf("after DELETE: %d %s", resp.StatusCode, body)
	}
	closed := logs.FilterMessage("http session closed").All()
	if len(closed) != 1 || closed[0].ContextMap()["reason"] != "delete" || closed[0].ContextMap()["session"] != sid {
		t.Fatalf("closing logged as %v", closed)
	}
	if logs.FilterMessage("http session opened").Len() != 1 {
		t.Fatal("the opening was not logged")
	}
}

func TestALostLeaseRefusesNewSessionsAndServesOldOnes(t *testing.T) {
	f := newFixture()
	var refused atomic.Pointer[httpserver.Refusal]
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Refusal: refused.Load})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)

	refused.Store(&httpserver.Refusal{Reason: "lease_lost", Message: "another process took the lease over", URL: "http://127.0.0.1:9999"})
	resp, body := c.do("POST", "/mcp", "", strings.Replace(initialize, `"id":1`, `"id":"init-7"`, 1))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("refused initialize: %d %v", resp.StatusCode, resp.Header)
	}
	var answer struct {
		ID    string
		Error struct {
			Code    int
			Message string
			Data    struct{ Reason, URL string }
		}
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil {
		t.Fatal(err)
	}
	e := answer.Error
	if answer.ID != "init-7" || e.Code != -32001 || !strings.Contains(e.Message, "lease_lost") ||
		!strings.Contains(e.Message, "another process took the lease over") || !strings.Contains(e.Message, "http://127.0.0.1:9999") ||
		e.Data.Reason != "lease_lost" || e.Data.URL != "http://127.0.0.1:9999" {
		t.Fatalf("refusal %s", body)
	}
	if n := s.Sessions(); n != 1 || f.registered() != 1 {
		t.Fatalf("after the refusal: %d live, %d registered; want 1 and 1", n, f.registered())
	}
	if resp, body := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"k"}}}`); resp.StatusCode != 200 || !strings.Contains(body, "value of k") {
		t.Fatalf("the existing session: %d %s", resp.StatusCode, body)
	}
}

// An idle session ends at the idle timeout after its last request, with
// at most a second's slack (mcp-go's sweeper alone took up to half a
// timeout more), and not before.
func TestAnIdleSessionExpires(t *testing.T) {
	f := newFixture()
	obs, logs := observer.New(zapcore.InfoLevel)
	const timeout = 300 * time.Millisecond
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, IdleTimeout: timeout, Logger: zap.New(obs)})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)
	sent := time.Now()
	if resp, _ := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != 200 {
		t.Fatalf("ping: %d", resp.StatusCode)
	}
	answered := time.Now()
	s.count.waitFor(t, 0)
	if ended := time.Now(); ended.Sub(sent) < timeout || ended.Sub(answered) > timeout+time.Second {
		t.Fatalf("the session ended %s after its last request was sent and %s after it was answered; want the idle timeout (%s), at most a second more",
			ended.Sub(sent), ended.Sub(answered), timeout)
	}
	closed := logs.FilterMessage("http session closed").All()
	if len(closed) != 1 || closed[0].ContextMap()["reason"] != "idle" {
		t.Fatalf("closing logged as %v", closed)
	}
	f.waitRegistered(t, 0) // the swept session leaves the MCPServer too
	if resp, _ := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); resp.StatusCode != 404 {
		t.Fatalf("after expiry: %d", resp.StatusCode)
	}
}

// A request that takes longer than the idle timeout is never cut short: a
// session being answered is not idle, and its timeout counts from the
// answer.
func TestASlowRequestKeepsItsSessionAlive(t *testing.T) {
	f := newFixture()
	const timeout = 200 * time.Millisecond
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, IdleTimeout: timeout})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)
	answered := make(chan string, 1)
	go func() {
		_, body := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`)
		answered <- body
	}()
	<-f.blocked
	// Past two idle timeouts, by the server's own timers: a session whose
	// timer were armed would have ended by the time this one fires.
	newClient(t, s.url).initialize()
	s.count.waitFor(t, 2)
	s.count.waitFor(t, 1) // the other, idle session expired
	if resp, _ := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":8,"method":"ping"}`); resp.StatusCode == http.StatusNotFound {
		t.Fatal("the session whose request is being answered expired")
	}
	released := time.Now()
	f.releaseAll()
	if body := <-answered; !strings.Contains(body, `"id":7`) {
		t.Fatalf("the slow call was answered %s", body)
	}
	s.count.waitFor(t, 0)
	if d := time.Since(released); d < timeout {
		t.Fatalf("the session ended %s after its slow request was released; want at least the idle timeout %s", d, timeout)
	}
}

func TestADroppedStreamEndsItsSessionAtOnce(t *testing.T) {
	f := newFixture()
	obs, logs := observer.New(zapcore.InfoLevel)
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Logger: zap.New(obs)})
	c := newClient(t, s.url)
	sid := c.initialize()
	s.count.waitFor(t, 1)

	resp, cancel := c.openStream(sid)
	cancel() // the client's connection drops, as when it is killed
	resp.Body.Close()
	s.count.waitFor(t, 0)
	closed := logs.FilterMessage("http session closed").All()
	if len(closed) != 1 || closed[0].ContextMap()["reason"] != "stream-dropped" {
		t.Fatalf("closing logged as %v", closed)
	}
	f.waitRegistered(t, 0) // else its peer would stay on the board
}

// A session may have more than one stream open (a client that opens a
// new one before its old connection is found dead): one of them dropped
// ends the session only when it was the last. The server has closed the
// dropped stream's connection before the session is asked for.
func TestAStreamDroppedBesideAnotherLeavesItsSessionOpen(t *testing.T) {
	f := newFixture()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, gate := make(chan struct{}, 8), make(chan struct{})
	close(gate)
	s := serveOn(t, closeTelling{ln.(*net.TCPListener), gate, closed}, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	first, drop := c.openStream(sid)
	second, end := c.openStream(sid)
	defer end()
	drop()
	first.Body.Close()
	<-closed // the server is done with the dropped stream
	if resp, body := c.do("POST", "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("after one of its two streams dropped, the session answered %d %s", resp.StatusCode, body)
	}
	second.Body.Close()
}

func TestShutdownEndsSessionsAndStreams(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	req, _ := http.NewRequest(http.MethodGet, s.url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s.stop()
	s.count.waitFor(t, 0)
	f.waitRegistered(t, 0) // none left registered after Shutdown
}

// A client that proved the server its own (an election's probe, as a
// newcomer's is) counts as coming, beside the sessions, until the
// connection it proved the server on carries its next request (its first
// message) or closes: a server whose own client leaves as another comes
// (answered from the probe, it opens its session next) does not end under
// it. (It counted no session, ended, and the newcomer took over from it.)
// A bridge's connection, proved and used at once, counts for no longer.
func TestAClientThatProvedTheServerCountsAsComing(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Identity: func(bool) httpserver.Identity { return httpserver.Identity{Leaseholder: true} }})
	_, conn, err := secret.ProbeSealed(t.Context(), s.url, testSecret, testProbe)
	if err != nil {
		t.Fatal(err)
	}
	s.count.waitFor(t, 1) // coming
	conn.Close()
	s.count.waitFor(t, 0) // it never came

	b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	if answer := b.Handle(t.Context(), []byte(initialize)); !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("initialize answered %s", answer)
	}
	s.count.waitFor(t, 1) // its session; its proved connection carried it
	b.Close()
	s.count.waitFor(t, 0)

	// Its first message, an initialize, keeps it counted while it is
	// answered: the session it opens counts from then on. (The count fell
	// to none as the initialize began, and an owner-left server ended.)
	f := newFixture()
	answering, release := make(chan struct{}), make(chan struct{})
	f.hooks.AddBeforeInitialize(func(context.Context, any, *mcp.InitializeRequest) {
		close(answering)
		<-release
	})
	s = serveHTTP(t, httpserver.Config{MCP: f.srv, Identity: func(bool) httpserver.Identity { return httpserver.Identity{Leaseholder: true} }})
	b, err = bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	go b.Handle(t.Context(), []byte(initialize))
	<-answering
	if n := s.count.now(); n != 1 {
		close(release)
		t.Fatalf("while the coming client's initialize was answered, the server counted %d", n)
	}
	close(release)
	s.count.waitFor(t, 1)
}
