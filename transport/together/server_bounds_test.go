package together

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/board"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// An initialize answered with an error opens no session, however many
// come: the count and the MCP server's sessions stay empty.
func TestAnInvalidInitializeOpensNoSession(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	for range 1000 {
		resp, body := c.do(http.MethodPost, "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":"not params"}`)
		if !strings.Contains(body, `"error"`) || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("an invalid initialize was answered %d %s with session %q", resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id"))
		}
	}
	if s.Sessions() != 0 || f.registered() != 0 { // and no id is kept: httpserver's TestARefusedInitializeKeepsNoID
		t.Fatalf("after 1000 invalid initializes: %d sessions counted, %d registered", s.Sessions(), f.registered())
	}
	c.initialize() // a valid one still opens one
	s.count.waitFor(t, 1)
}

// Sessions are capped: beyond the cap a new one is refused with 503 and
// Retry-After, and the existing ones go on.
func TestSessionsAreCapped(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 2})
	c := newClient(t, s.url)
	sid := c.initialize()
	c.initialize()
	resp, body := c.do(http.MethodPost, "/mcp", "", initialize)
	if e := refusal(t, body).Error; resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" || e.Code != wire.ErrCodeFull || e.Sessions != 2 {
		t.Fatalf("a third session: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if resp, _ := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("an existing session after the refusal: %d", resp.StatusCode)
	}
}

// Initializes sent at once open no more sessions than the cap: each takes
// its place before it is answered, not once it has been.
func TestSessionsOpenedAtOnceStayWithinTheCap(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxSessions: 2})
	c := newClient(t, s.url)
	var opened atomic.Int32
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(initialize))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", secret.Authorization(testSecret))
			if resp, err := c.http.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.Header.Get("Mcp-Session-Id") != "" {
					opened.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n, counted := opened.Load(), s.Sessions(); n != 2 || counted != 2 {
		t.Fatalf("%d sessions opened of 40 sent at once, %d counted; the cap is 2", n, counted)
	}
}

// A body trickled in is cut off at the body timeout: the server answers
// and closes the connection rather than hold it. One trickled in without
// the token, or under a foreign Host, is refused at once, and its
// connection closed: nothing holds a shutdown.
func TestASlowBodyIsCutOff(t *testing.T) {
	const limit = 200 * time.Millisecond
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, BodyTimeout: limit})
	addr := strings.TrimPrefix(s.url, "http://")
	trickle := func(host, authorization string) (time.Duration, *http.Response) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		began := time.Now()
		_, err = conn.Write([]byte("POST /mcp HTTP/1.1\r\nHost: " + host + authorization +
			"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(wait)) // the cap of the wait, not the measure
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("no answer after %s: %v", time.Since(began), err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if _, err := br.ReadByte(); err == nil {
			t.Fatal("the connection stays open after the answer")
		}
		return time.Since(began), resp
	}
	token := "\r\nAuthorization: " + secret.Authorization(testSecret)
	if took, resp := trickle(addr, token); took < limit || took > limit+time.Second || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("the slow body was cut off after %s (status %d); want about %s", took, resp.StatusCode, limit)
	}
	if took, resp := trickle(addr, ""); took > limit || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the slow body without the token was answered %d after %s; want 401 at once", resp.StatusCode, took)
	}
	if took, resp := trickle("rebound.example", token); took > limit || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("the slow body under a foreign Host was answered %d after %s; want 403 at once", resp.StatusCode, took)
	}
}

// What anyone who can reach the port sends before a token is asked is
// bounded: a body declared on any request but a POST to /mcp is never
// waited for, and a head is at most 64 KiB.
func TestWhatAnyoneCanSendIsBounded(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	addr := strings.TrimPrefix(s.url, "http://")
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(wait)) // the cap of each wait, not the measure
		return conn, bufio.NewReader(conn)
	}
	answer := func(br *bufio.Reader) (*http.Response, error) {
		resp, err := http.ReadResponse(br, nil)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	for _, path := range []string{"/", "/nowhere", "/mcp"} {
		conn, br := dial()
		conn.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Length: 1\r\n\r\n"))
		if _, err := answer(br); err != nil {
			t.Fatalf("GET %s with a body never sent: no answer (%v)", path, err)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Fatalf("GET %s with a body never sent: the connection stays open", path)
		}
	}

	conn, br := dial()
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\nX-Pad: " + strings.Repeat("x", 100<<10) + "\r\n\r\n"))
	if resp, err := answer(br); err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a 100 KiB head: %v %v", resp, err)
	}
}

// Connections are capped; those no request of which proved the lease's
// secret (its token, an election's sealed probe, or a key of the board
// page that the token drew) make room for a newcomer, oldest first, so
// that whoever reaches the port without the token (another local user)
// holds no place a client of the lease needs. Where every place is
// proven, the one idle the longest makes room: connections of the
// owner's that pile up turn no newcomer away.
func TestConnectionsWithoutTheTokenMakeRoom(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxConnections: 4, Board: board.New(quietBoard{}, testSecret, zap.NewNop(), zap.NewNop())})
	addr := strings.TrimPrefix(s.url, "http://")
	type conn struct {
		net.Conn
		br *bufio.Reader
	}
	dial := func() conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(wait)) // the cap of each wait, not the measure
		return conn{c, bufio.NewReader(c)}
	}
	// ask sends method path on c with the header lines given, and returns
	// the answer's status (0: none) and body.
	ask := func(c conn, method, path, header string) (int, string) {
		if _, err := c.Write([]byte(method + " " + path + " HTTP/1.1\r\nHost: " + addr + header + "\r\n\r\n")); err != nil {
			return 0, ""
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			return 0, ""
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	get := func(c conn, header string) bool {
		status, _ := ask(c, http.MethodGet, "/", header)
		return status == http.StatusOK
	}
	// closed reports whether the server closed c (its deadline is no
	// answer).
	closed := func(c conn) bool {
		_, err := c.br.ReadByte()
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	token := "\r\nAuthorization: " + secret.Authorization(testSecret)

	// Four connections that say nothing fill the cap (none is idle: which
	// of those served goes first is the unit test's); a fifth, answered,
	// has made room by closing the oldest.
	anyone := []conn{dial(), dial(), dial(), dial()}
	if c := dial(); get(c, "") {
		anyone = append(anyone, c)
	} else {
		t.Fatal("a connection without the token beyond the cap was not served")
	}
	if !closed(anyone[0]) {
		t.Fatal("the oldest connection without the token was kept beyond the cap")
	}
	if !get(anyone[1], "") {
		t.Fatal("a connection within the cap was closed")
	}

	owner := []conn{dial(), dial()}
	for i, c := range owner {
		if !get(c, token) {
			t.Fatalf("connection %d with the token was not served", i+1)
		}
	}
	_, probed, err := secret.ProbeSealed(t.Context(), s.url, testSecret, wait)
	if err != nil {
		t.Fatalf("an election's probe was not answered: %v", err)
	}
	t.Cleanup(func() { probed.Close() })
	owner = append(owner, conn{probed, bufio.NewReader(probed)})
	_, drawn := ask(owner[0], http.MethodPost, "/board/token", token)
	path := regexp.MustCompile(`"path":"/board\?(token=[0-9a-f]+)"`).FindStringSubmatch(drawn)
	if path == nil {
		t.Fatalf("POST /board/token: %s", drawn)
	}
	_, given := ask(owner[0], http.MethodPost, "/board/key?"+path[1], "")
	key := regexp.MustCompile(`"key":"([0-9a-f]+)"`).FindStringSubmatch(given)
	if key == nil {
		t.Fatalf("POST /board/key: %s", given)
	}
	page := dial()
	if status, body := ask(page, http.MethodGet, "/board/api/server", "\r\nAuthorization: Bearer "+key[1]); status != http.StatusOK {
		t.Fatalf("the board page's read: %d %s", status, body)
	}
	owner = append(owner, page)
	for i, c := range anyone[1:] {
		if !closed(c) {
			t.Errorf("connection %d without the token was kept while the owner's took every place", i+2)
		}
	}
	// One of the owner's idle connections makes room. (Which one is the
	// unit test's: the server marks a connection idle only once its answer
	// is out, which this side may outrun.)
	if !get(dial(), "") {
		t.Fatal("a newcomer at a cap of proven connections was not served")
	}
	var kept []int
	for i, c := range owner {
		if get(c, token) {
			kept = append(kept, i+1)
		}
	}
	if len(kept) != len(owner)-1 {
		t.Fatalf("of the owner's %d connections, %v were kept: one idle one makes room", len(owner), kept)
	}
}

// Two newcomers at a cap of the owner's connections, some of them idle:
// the first, whose probe is on its way (a bridge's new connection, an
// election's), is not closed to make room for the second while a proven
// connection sits idle, which its client dials again. Closed, its client
// would leave a healthy server, or take its lease over.
func TestANewcomerOnItsWayOutlivesTheIdleConnectionsAtTheCap(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxConnections: 4})
	addr := strings.TrimPrefix(s.url, "http://")
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(wait)) // the cap of each wait, not the measure
		return c, bufio.NewReader(c)
	}
	get := func(c net.Conn, br *bufio.Reader, target, header string) bool {
		if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: " + addr + header + "\r\n\r\n")); err != nil {
			return false
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK
	}
	token := "\r\nAuthorization: " + secret.Authorization(testSecret)
	madeRoom := make(chan struct{}, 4)
	for i := range 4 { // every place, proven, then idle
		c, br := dial()
		if !get(c, br, "/", token) {
			t.Fatalf("connection %d with the token was not served", i+1)
		}
		go func() { // which of them makes room is the unit test's
			if _, err := br.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
				madeRoom <- struct{}{}
			}
		}()
	}
	first, br := dial() // accepted; its probe is on its way
	select {
	case <-madeRoom:
	case <-time.After(wait):
		t.Fatal("no idle connection with the token made room for the first newcomer")
	}
	_, probed, err := secret.ProbeSealed(t.Context(), s.url, testSecret, wait)
	if err != nil {
		t.Fatalf("the second newcomer's probe was not answered: %v", err)
	}
	t.Cleanup(func() { probed.Close() })
	challenge := secret.NewChallenge()
	if !get(first, br, "/?challenge="+challenge+"&seal="+secret.SealAsk(testSecret, challenge), "") {
		t.Fatal("a newcomer whose probe was on its way was closed to make room, while the owner's connections sat idle")
	}
}

// A connection without the token holds no shutdown: one that asks and
// never reads what it is answered (requests sent one after the other, none
// of their answers read) leaves the server writing to it, and a shutdown
// waiting for that request, until its bound, or forever under none, with
// the lease's release behind it. Shutdown closes it as it begins.
func TestAConnectionWithoutTheTokenHoldsNoShutdown(t *testing.T) {
	t.Parallel()
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	addr := strings.TrimPrefix(s.url, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // before the cleanup's own shutdown, which would wait for this one
	asks := []byte(strings.Repeat("GET / HTTP/1.1\r\nHost: "+addr+"\r\n\r\n", 1000))
	for {
		// The server reads on only while it can write its answers: a
		// write that stays blocked says its answers fill every buffer.
		_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := conn.Write(asks); errors.Is(err, os.ErrDeadlineExceeded) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("a connection without the token, reading none of its answers, held the shutdown: %v", err)
	}
}

// quietBoard is a board of nothing, for a page whose keys are what counts.
type quietBoard struct{}

func (quietBoard) PeersJSON() ([]byte, error)         { return []byte(`{}`), nil }
func (quietBoard) OverlapsJSON() ([]byte, error)      { return []byte(`{}`), nil }
func (quietBoard) ExecutionsJSON(int) ([]byte, error) { return []byte(`{}`), nil }
func (quietBoard) ServerJSON() ([]byte, error)        { return []byte(`{}`), nil }
func (quietBoard) GraphJSON() ([]byte, error)         { return []byte(`{}`), nil }
func (quietBoard) Changes() (string, <-chan struct{}) { return "", nil }

// An initialize whose client hung up before it was answered opens no
// session: nobody holds its id, so it would only hold a slot, a peer on
// the board and an owner-left server until the idle timeout. The client
// hangs up once mcp-go has registered the session, before the answer is
// written.
func TestAnInitializeWhoseClientHungUpOpensNoSession(t *testing.T) {
	f := newFixture()
	registering, hungUp := make(chan struct{}, 1), make(chan struct{})
	f.hooks.AddOnRegisterSession(func(context.Context, server.ClientSession) {
		registering <- struct{}{}
		<-hungUp
	})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(s.url, "http://"), secret.Authorization(testSecret), len(initialize), initialize)
	if err != nil {
		t.Fatal(err)
	}
	<-registering
	conn.Close()
	close(hungUp)
	f.waitRegistered(t, 0)
	if n := s.Sessions(); n != 0 {
		t.Fatalf("%d sessions counted for an initialize whose client hung up", n)
	}
}

// A refusal anyone who reaches the port can cause, no token asked, is
// logged at most once a second, however often it is caused: the next
// line of it says how many went unlogged, and another refusal has lines
// of its own.
func TestARefusalFloodFillsNoLog(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	clk := &settableClock{now: time.Unix(1_800_000_000, 0)}
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(obs, zap.WithClock(clk))})
	const foreignHost = "a loopback request under a foreign host name was refused"
	refuse := func(host string) {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a foreign Host was answered %d", resp.StatusCode)
		}
	}
	for range 50 {
		refuse("evil.example")
	}
	if n := logs.FilterMessage(foreignHost).Len(); n != 1 {
		t.Fatalf("50 refusals within a second logged %d lines", n)
	}
	clk.add(time.Second)
	refuse("other.example")
	lines := logs.FilterMessage(foreignHost).All()
	if len(lines) != 2 || lines[1].ContextMap()["unlogged"] != int64(49) || lines[1].ContextMap()["host"] != "other.example" {
		t.Fatalf("a second later: %+v", lines)
	}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/mcp", strings.NewReader(initialize))
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Authorization", secret.Authorization(testSecret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := logs.FilterMessage("a request from another origin was refused").Len(); n != 1 || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("another refusal (%d) logged %d lines", resp.StatusCode, n)
	}
}

// A refused Origin is logged at most once a second on /mcp too, token or
// not (docs/security.md#bounded): a page or a script of the user's own
// that sends a foreign Origin with every request fills no log.
func TestAnOriginRefusalFloodOnMCPFillsNoLog(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	clk := &settableClock{now: time.Unix(1_800_000_000, 0)}
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(obs, zap.WithClock(clk))})
	c := newClient(t, s.url)
	for range 50 {
		if resp, body := c.do(http.MethodPost, "/mcp", "", initialize, "Origin", "http://evil.example"); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a foreign Origin was answered %d %s", resp.StatusCode, body)
		}
	}
	if n := logs.FilterMessage("a request from another origin was refused").Len(); n != 1 {
		t.Fatalf("50 refusals of a foreign Origin within a second logged %d lines", n)
	}
}

// settableClock is a zap clock a test moves.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
func (c *settableClock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(d) }
func (c *settableClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Status asks without the seal: the server proves itself, then status
// sends its token on the same connection (registry.AskProven). At a cap of
// the owner's idle connections, a newcomer between the two (the client
// whose idle connection made room for status, dialing again) closes an
// idle one of the owner's, not status's: its token request was on its way.
func TestStatusBetweenItsProofAndItsTokenKeepsItsConnectionAtTheCap(t *testing.T) {
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, MaxConnections: 4})
	addr := strings.TrimPrefix(s.url, "http://")
	token := "\r\nAuthorization: " + secret.Authorization(testSecret)
	get := func(c net.Conn, br *bufio.Reader, header string) bool {
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + header + "\r\n\r\n")); err != nil {
			return false
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return false
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK
	}
	for i := range 4 { // every place, proven, then idle
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		_ = c.SetDeadline(time.Now().Add(wait)) // the cap of each wait, not the measure
		if !get(c, bufio.NewReader(c), token) {
			t.Fatalf("connection %d with the token was not served", i+1)
		}
	}
	_, status, err := secret.Probe(t.Context(), s.url, testSecret, wait) // status's proof, no seal
	if err != nil {
		t.Fatalf("status's probe was not answered: %v", err)
	}
	t.Cleanup(func() { status.Close() })
	_ = status.SetDeadline(time.Now().Add(wait))
	_, probed, err := secret.ProbeSealed(t.Context(), s.url, testSecret, wait)
	if err != nil {
		t.Fatalf("a newcomer's probe was not answered: %v", err)
	}
	t.Cleanup(func() { probed.Close() })
	if !get(status, bufio.NewReader(status), token) {
		t.Fatal("status's connection was closed between its proof and its token, while the owner's connections sat idle")
	}
}
