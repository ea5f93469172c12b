package httpserver

import (
	"context"
	"encoding/json"
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
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A call under way when Shutdown begins is answered on its session, which
// is closed only after it; a call that arrives on that session meanwhile
// is refused 503 without running, which a bridge sends to the next server.
func TestShutdownClosesNoSessionUnderItsCall(t *testing.T) {
	closed := make(chan struct{}) // the session was closed
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) { close(closed) })
	entered, release := make(chan struct{}), make(chan struct{})
	var runs atomic.Int32
	var closedUnder atomic.Bool
	mcpServer := server.NewMCPServer("t", "1", server.WithHooks(hooks))
	mcpServer.AddTool(mcp.NewTool("hold"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		runs.Add(1)
		entered <- struct{}{}
		<-release
		select {
		case <-closed:
			closedUnder.Store(true)
		default:
		}
		return mcp.NewToolResultText("held"), nil
	})
	waiting := make(chan struct{}) // Shutdown waits for the call
	var once sync.Once
	logger := zap.New(zapcore.RegisterHooks(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel),
		func(e zapcore.Entry) error {
			if strings.Contains(e.Message, "waiting for the requests under way") {
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
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	url := URLOf(ln.Addr()) + "/mcp"
	post := func(sid, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", secret.Authorization(key))
		if sid != "" {
			req.Header.Set(server.HeaderKeySessionID, sid)
		}
		resp, err := c.Do(req)
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
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold"}}`

	answered := make(chan string, 1)
	go func() { _, body := post(sid, call); answered <- body }()
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	select {
	case <-waiting:
	case <-closed:
		close(release)
		t.Fatal("Shutdown closed the session while its call was under way")
	}
	resp, body := post(sid, call)
	var refusal wire.HTTPError
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &refusal) != nil || refusal.Error.Code != errCodeUnavailable {
		t.Errorf("a call on the session after Shutdown began was answered %v %s, want 503 %s", resp, body, errCodeUnavailable)
	}
	close(release)
	if body := <-answered; !strings.Contains(body, "held") {
		t.Errorf("the call under way was answered %s", body)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	<-closed
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if closedUnder.Load() {
		t.Error("the session was closed before its call returned")
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
}
