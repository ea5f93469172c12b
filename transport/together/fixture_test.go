package together

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// wait is the cap of every wait on a condition in these tests: only a
// test that fails waits it out. Under wine on a loaded machine a loop
// through 12,288 messages took over 10 s.
const wait = 30 * time.Second

// fixture is a real mcp-go server with a few tools and resources.
type fixture struct {
	srv       *server.MCPServer
	hooks     *server.Hooks
	announces chan string   // arguments of each majordomus_announce call
	replays   chan bool     // whether each was marked a replay (_meta["io.majordomus/replay"])
	release   chan struct{} // closed to let "write" and "wait" return
	released  sync.Once
	blocked   chan struct{} // signalled when "write" or "wait" starts
	roots     chan mcp.Root // the first root each "roots" call got
	mu        sync.Mutex
	sessions  map[string]server.ClientSession // registered sessions (from hooks)
	changed   chan struct{}                   // closed and replaced when sessions changes
}

func newFixture(opts ...server.ServerOption) *fixture {
	f := &fixture{
		announces: make(chan string, 16),
		replays:   make(chan bool, 16),
		release:   make(chan struct{}),
		blocked:   make(chan struct{}, 16),
		roots:     make(chan mcp.Root, 4),
		sessions:  map[string]server.ClientSession{},
		changed:   make(chan struct{}),
	}
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		f.mu.Lock()
		f.sessions[s.SessionID()] = s
		f.noteLocked()
		f.mu.Unlock()
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		f.mu.Lock()
		delete(f.sessions, s.SessionID())
		f.noteLocked()
		f.mu.Unlock()
	})
	f.hooks = hooks
	f.srv = server.NewMCPServer("fixture", "0.0.1", append([]server.ServerOption{server.WithHooks(hooks), server.WithLogging(),
		server.WithToolCapabilities(true), server.WithResourceCapabilities(true, true), server.WithRoots()}, opts...)...)
	text := func(s string) (*mcp.CallToolResult, error) { return mcp.NewToolResultText(s), nil }
	f.srv.AddTool(mcp.NewTool("lookup", mcp.WithString("key"), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("value of " + r.GetString("key", ""))
		})
	f.srv.AddTool(mcp.NewTool("write", mcp.WithString("what"), mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(false)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.hold(ctx)
			return text("wrote " + r.GetString("what", ""))
		})
	f.srv.AddTool(mcp.NewTool("wait", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.hold(ctx)
			return text("waited")
		})
	f.srv.AddTool(mcp.NewTool("notify", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
				map[string]any{"progressToken": 1, "progress": 0.5})
			return text("notified")
		})
	f.srv.AddTool(mcp.NewTool("roots", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
			if err != nil {
				return nil, err
			}
			if len(res.Roots) > 0 {
				f.roots <- res.Roots[0]
				return text("root " + res.Roots[0].URI)
			}
			return text("no roots")
		})
	// rootsLater waits as "wait" does, then asks its client for its roots.
	f.srv.AddTool(mcp.NewTool("rootsLater", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := f.hold(ctx); err != nil {
				return nil, err
			}
			res, err := server.ServerFromContext(ctx).RequestRoots(ctx, mcp.ListRootsRequest{})
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("%d roots", len(res.Roots)))
		})
	// confirm asks its client first (a 2026-07-28 multi round-trip: the
	// call is answered input_required, and retried with the answer).
	f.srv.AddTool(mcp.NewTool("confirm", mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if answer := server.ElicitationResponse(r.Params.InputResponses, "sure"); answer != nil {
				return text("confirmed: " + string(answer.Action))
			}
			return server.NewInputRequestBuilder("asked-once").
				Elicit("sure", mcp.ElicitationParams{Message: "Sure?", RequestedSchema: map[string]any{"type": "object"}}).
				ToolResult(), nil
		})
	f.srv.AddTool(mcp.NewTool("majordomus_announce", mcp.WithString("intent")),
		func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(r.GetArguments())
			f.announces <- string(b)
			replay := false
			if r.Params.Meta != nil {
				replay, _ = r.Params.Meta.AdditionalFields["io.majordomus/replay"].(bool)
			}
			f.replays <- replay
			return text("announced")
		})
	for _, uri := range []string{"fixture://a", "fixture://b"} {
		f.srv.AddResource(mcp.NewResource(uri, strings.TrimPrefix(uri, "fixture://"), mcp.WithMIMEType("text/plain")),
			func(_ context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, MIMEType: "text/plain", Text: "body of " + r.Params.URI}}, nil
			})
	}
	return f
}

// hold says a call started (blocked) and waits until it may return
// (release), or its ctx ends, which it returns.
func (f *fixture) hold(ctx context.Context) error {
	f.blocked <- struct{}{}
	select {
	case <-f.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// releaseAll lets every "write" and "wait" call return, now and later.
func (f *fixture) releaseAll() { f.released.Do(func() { close(f.release) }) }

// session is the registered session id, as the MCPServer sees it; nil
// when none.
func (f *fixture) session(id string) server.ClientSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[id]
}

// holdInitialize holds the server's first initialize until release is
// closed; entered is closed when it arrives.
func (f *fixture) holdInitialize() (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	f.hooks.AddBeforeInitialize(func(context.Context, any, *mcp.InitializeRequest) {
		close(entered)
		<-release
	})
	return entered, release
}

// registered is the number of sessions mcp-go has registered.
func (f *fixture) registered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

// noteLocked wakes the waiters of waitRegistered; f.mu is held.
func (f *fixture) noteLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// waitRegistered waits until n sessions are registered with the MCPServer.
// mcp-go unregisters a swept session just after it is terminated, so a
// test that saw the count drop waits for the hook too.
func (f *fixture) waitRegistered(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		got, changed := len(f.sessions), f.changed
		f.mu.Unlock()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d sessions registered, want %d", got, n)
		}
	}
}

// counter records OnSessions calls and lets a test wait for a count.
type counter struct {
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func newCounter() *counter { return &counter{changed: make(chan struct{})} }

func (c *counter) set(n int) {
	c.mu.Lock()
	c.n = n
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// now is the count last reported.
func (c *counter) now() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *counter) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(wait)
	for {
		c.mu.Lock()
		got, changed := c.n, c.changed
		c.mu.Unlock()
		if got == n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("live sessions stayed %d, want %d", got, n)
		}
	}
}

// served is an HTTPServer serving on a free loopback port.
type served struct {
	*httpserver.Server
	url   string
	count *counter
	done  chan error
}

func serveHTTP(t *testing.T, cfg httpserver.Config) *served {
	t.Helper()
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return serveOn(t, ln, cfg)
}

// testSecret is the secret of the tests' servers, unless one sets its own.
var testSecret = secret.New()

// testProbe bounds the proofs of the tests' bridges, as the probe timeout
// bounds a real one's.
const testProbe = 2 * time.Second

func serveOn(t *testing.T, ln net.Listener, cfg httpserver.Config) *served {
	t.Helper()
	if cfg.Secret == "" {
		cfg.Secret = testSecret
	}
	s := &served{count: newCounter(), url: httpserver.URLOf(ln.Addr()), done: make(chan error, 1)}
	if cfg.OnSessions == nil {
		cfg.OnSessions = s.count.set
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	s.Server = httpserver.New(cfg)
	go func() { s.done <- s.Serve(ln) }()
	t.Cleanup(s.stop)
	return s
}

// stop shuts the server down gracefully and waits for Serve to return.
func (s *served) stop() { s.stopWithin(5 * time.Second) }

// kill shuts the server down at once: requests under way are cut off.
func (s *served) kill() { s.stopWithin(0) }

func (s *served) stopWithin(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = s.Shutdown(ctx)
	<-s.done
	s.done <- nil // later calls return at once
}

// client speaks HTTP to a served server.
type client struct {
	t    *testing.T
	url  string
	http *http.Client
}

func newClient(t *testing.T, url string) *client {
	c := &client{t: t, url: url, http: &http.Client{Transport: &http.Transport{}}}
	t.Cleanup(c.http.CloseIdleConnections)
	return c
}

// do sends one request and returns the answer, body read.
func (c *client) do(method, path, sid, body string, header ...string) (*http.Response, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(testSecret))
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	for i := 0; i+1 < len(header); i += 2 {
		switch {
		case header[i] == "Host":
			req.Host = header[i+1]
		case header[i+1] == "":
			req.Header.Del(header[i])
		default:
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// initialize opens a session and returns its id.
func (c *client) initialize() string {
	c.t.Helper()
	resp, body := c.do(http.MethodPost, "/mcp", "", initialize)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" || !strings.Contains(body, `"result"`) {
		c.t.Fatalf("initialize: %d %q %s", resp.StatusCode, sid, body)
	}
	c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// refusal decodes a JSON error body.
func refusal(t *testing.T, body string) wire.HTTPError {
	t.Helper()
	var e wire.HTTPError
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	return e
}
