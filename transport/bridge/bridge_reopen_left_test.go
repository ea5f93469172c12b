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

// A bridge that gave up on a server that was only slow, a call of its
// client still in flight there, hands the client's session to the next
// bridge, which the election attaches to that same server. That bridge
// ends the session left there before it opens the client's again (its
// peer holds the id the new one claims): not under the call in flight,
// which would be answered for a session that has ended, but once it has.
func TestTheNextBridgeEndsNoLeftSessionUnderItsCall(t *testing.T) {
	key := secret.New()
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	began, release := make(chan struct{}), make(chan struct{})
	ended := make(chan bool, 2) // for each session ended, whether the call had ended then
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
		<-release
		return mcp.NewToolResultText("done"), nil
	})
	waiting := make(chan struct{}) // the server holds the DELETE until the call has ended
	var once atomic.Bool
	core, _ := observer.New(zap.DebugLevel)
	srvLog := zap.New(zapcore.RegisterHooks(core, func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "a DELETE waits for the requests of its session") && once.CompareAndSwap(false, true) {
			close(waiting)
		}
		return nil
	}))
	srv := httpserver.New(httpserver.Config{MCP: mcpServer, Secret: key,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Name: "majordomus", Leaseholder: true} }, Logger: srvLog})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	url := httpserver.URLOf(ln.Addr())
	b1, err := New(t.Context(), Config{URL: url, Secret: key, ProbeTimeout: 5 * time.Second, Out: wire.NewFrameWriter(io.Discard), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b1.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // the bound of every wait
	defer cancel()
	if _, err := b1.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b1.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		t.Fatal(err)
	}
	answered := make(chan []byte, 1)
	go func() {
		answer, _ := b1.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`))
		answered <- answer
	}()
	select {
	case <-began:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	// its heartbeat gave up on the server; the election found it serving
	g := b1.leave(errors.New("the shared server has answered no probe (stopped or frozen)"))

	b2, err := New(t.Context(), Config{URL: url, Secret: key, ProbeTimeout: 5 * time.Second, Out: wire.NewFrameWriter(io.Discard),
		Logger: zap.NewNop(), Carried: g.Session})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b2.Close)
	replayed := make(chan error, 1)
	go func() { replayed <- g.Session.Replay(ctx, b2) }()
	select {
	case <-waiting: // the DELETE waits for the call
	case err := <-replayed: // the session left was ended, and the client's opened again
		replayed <- err
	case <-ctx.Done():
		t.Fatal("the next bridge never opened the client's session")
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
	if err := <-replayed; err != nil {
		t.Fatalf("the client's session was not opened again: %v", err)
	}
	select {
	case callHadEnded := <-ended:
		if !callHadEnded {
			t.Fatal("the next bridge ended the session left on the server while a call of its client was in flight there")
		}
	case <-ctx.Done():
		t.Fatal("the session the bridge left was never ended")
	}
}
