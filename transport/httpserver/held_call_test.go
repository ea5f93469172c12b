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

// heldCall is a server whose one tool, hold, runs until release is
// closed, and an HTTP client of it with a session opened: what the tests
// of a session ended under its call share.
type heldCall struct {
	t       *testing.T
	s       *Server
	served  chan error // what Serve returned
	c       *http.Client
	key     string
	url     string
	sid     string
	entered chan struct{} // a call of hold began
	release chan struct{}
	closed  chan struct{} // the session was closed
	logged  chan struct{} // the server logged a line holding the words given
	// closedUnder: the session was closed before a call of hold returned
	closedUnder atomic.Bool
	runs        atomic.Int32 // calls of hold
}

// newHeldCall serves hold and opens a session on it; logged is closed
// once the server logs a line holding words.
func newHeldCall(t *testing.T, words string) *heldCall {
	h := &heldCall{t: t, served: make(chan error, 1), key: secret.New(), entered: make(chan struct{}, 1),
		release: make(chan struct{}), closed: make(chan struct{}), logged: make(chan struct{})}
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) { close(h.closed) })
	mcpServer := server.NewMCPServer("t", "1", server.WithHooks(hooks))
	mcpServer.AddTool(mcp.NewTool("hold"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h.runs.Add(1)
		select {
		case h.entered <- struct{}{}:
		default:
		}
		<-h.release
		select {
		case <-h.closed:
			h.closedUnder.Store(true)
		default:
		}
		return mcp.NewToolResultText("held"), nil
	})
	var once sync.Once
	logger := zap.New(zapcore.RegisterHooks(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.DebugLevel),
		func(e zapcore.Entry) error {
			if strings.Contains(e.Message, words) {
				once.Do(func() { close(h.logged) })
			}
			return nil
		}))
	ln, err := Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.s = New(Config{MCP: mcpServer, Secret: h.key, Logger: logger})
	go func() { h.served <- h.s.Serve(ln) }()
	h.c = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(h.c.CloseIdleConnections)
	h.url = URLOf(ln.Addr()) + "/mcp"
	resp, _ := h.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if resp == nil {
		t.FailNow()
	}
	h.sid = resp.Header.Get(server.HeaderKeySessionID)
	h.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return h
}

// request is an authorized request of the session under ctx.
func (h *heldCall) request(ctx context.Context, method, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, method, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(h.key))
	if h.sid != "" {
		req.Header.Set(server.HeaderKeySessionID, h.sid)
	}
	return req
}

// post sends body on the session and returns the response and its body;
// nil when it was not answered (the test is failed).
func (h *heldCall) post(body string) (*http.Response, string) {
	resp, err := h.c.Do(h.request(context.Background(), http.MethodPost, body))
	if err != nil {
		h.t.Error(err)
		return nil, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// holdCall is a call of hold.
const holdCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold"}}`
