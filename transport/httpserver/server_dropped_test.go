package httpserver

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// A session whose client's stream drops while a call of its is under way
// (a bridge that gave up on a server continued after a freeze closes its
// stream, its call still in flight there) ends only once that call has
// been answered: ended first, the call would be answered "this session has
// ended" or "not on the board", and a bridge relays that as its answer.
func TestADroppedStreamEndsNoSessionUnderItsCall(t *testing.T) {
	closed := make(chan struct{})
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) { close(closed) })
	entered, release := make(chan struct{}), make(chan struct{})
	var closedUnder atomic.Bool
	mcpServer := server.NewMCPServer("t", "1", server.WithHooks(hooks))
	mcpServer.AddTool(mcp.NewTool("hold"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(entered)
		<-release
		select {
		case <-closed:
			closedUnder.Store(true)
		default:
		}
		return mcp.NewToolResultText("held"), nil
	})
	waiting := make(chan struct{}) // the session's end waits for the call
	var once sync.Once
	logger := zap.New(zapcore.RegisterHooks(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.DebugLevel),
		func(e zapcore.Entry) error {
			if strings.Contains(e.Message, "it ends once its requests have ended") {
				once.Do(func() { close(waiting) })
			}
			return nil
		}))

	ln, err := Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := secret.New()
	s := New(Config{MCP: mcpServer, Secret: key, Logger: logger})
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	url := URLOf(ln.Addr()) + "/mcp"
	request := func(ctx context.Context, method, sid, body string) *http.Request {
		req, _ := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", secret.Authorization(key))
		if sid != "" {
			req.Header.Set(server.HeaderKeySessionID, sid)
		}
		return req
	}
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		resp, err := c.Do(request(context.Background(), http.MethodPost, sid, body))
		if err != nil {
			t.Error(err)
			return nil, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	sid := resp.Header.Get(server.HeaderKeySessionID)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	streamCtx, dropStream := context.WithCancel(context.Background())
	defer dropStream()
	stream, err := c.Do(request(streamCtx, http.MethodGet, sid, ""))
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the session's stream: %v %v", stream, err)
	}

	answered := make(chan string, 1)
	go func() {
		_, body := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold"}}`)
		answered <- body
	}()
	<-entered
	dropStream() // its connection closes
	stream.Body.Close()
	select {
	case <-waiting:
	case <-closed:
	}
	close(release)
	if body := <-answered; !strings.Contains(body, "held") {
		t.Errorf("the call under way was answered %s", body)
	}
	<-closed
	if closedUnder.Load() {
		t.Error("the session was ended, its stream dropped, before its call returned")
	}
}
