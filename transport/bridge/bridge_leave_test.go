package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A bridge that gives up on its server (its heartbeat found it silent:
// stopped, say) while a call of its client is in flight there ends the
// session it left only once that call has ended: a server continued
// after a freeze would otherwise take the DELETE first and answer the
// call "this session has ended: the call did not run; send initialize
// again", and the client would get that as its answer.
func TestALeftSessionIsNotEndedUnderACallInFlight(t *testing.T) {
	key := secret.New()
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	began, release := make(chan struct{}), make(chan struct{})
	ended := make(chan bool, 1) // whether the call had ended when its session ended
	var callEnded atomic.Bool
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) {
		select {
		case ended <- callEnded.Load():
		default:
		}
	})
	mcpServer := server.NewMCPServer("majordomus", "1", server.WithToolCapabilities(false), server.WithHooks(hooks))
	mcpServer.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer callEnded.Store(true)
		close(began)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done"), nil
	})
	srv := httpserver.New(httpserver.Config{MCP: mcpServer, Secret: key,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Name: "majordomus", Leaseholder: true} }, Logger: zap.NewNop()})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	waiting := make(chan struct{})
	core, _ := observer.New(zap.DebugLevel)
	logger := zap.New(zapcore.RegisterHooks(core, func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "once the calls in flight there have ended") {
			close(waiting)
		}
		return nil
	}))
	b, err := New(t.Context(), Config{URL: httpserver.URLOf(ln.Addr()), Secret: key, ProbeTimeout: 5 * time.Second,
		Out: wire.NewFrameWriter(io.Discard), Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // the bound of every wait
	defer cancel()
	if _, err := b.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	answered := make(chan []byte, 1)
	go func() {
		answer, _ := b.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`))
		answered <- answer
	}()
	select {
	case <-began:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}

	b.leave(errors.New("the shared server has answered no probe (stopped or frozen)"))
	select {
	case <-waiting: // it waits for the call
	case beforeTheCall := <-ended:
		ended <- beforeTheCall
	case <-ctx.Done():
		t.Fatal("the bridge neither ended the session it left nor waited for the call in flight there")
	}
	close(release)
	select {
	case answer := <-answered:
		if !strings.Contains(string(answer), `"done"`) {
			t.Errorf("the call in flight was answered %s", answer)
		}
	case <-ctx.Done():
		t.Fatal("the call in flight was never answered")
	}
	select {
	case callHadEnded := <-ended:
		if !callHadEnded {
			t.Fatal("the session the bridge left was ended while a call of its client was in flight there")
		}
	case <-ctx.Done():
		t.Fatal("the session the bridge left was never ended")
	}
}
