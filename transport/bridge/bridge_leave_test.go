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
	s := newSlowCall(t)
	s.b.leave(errors.New("the shared server has answered no probe (stopped or frozen)"))
	select {
	case <-s.leaving: // its DELETE came, under the call
	case beforeTheCall := <-s.ended:
		s.ended <- beforeTheCall
	case <-s.ctx.Done():
		t.Fatal("the bridge did not end the session it left")
	}
	s.answeredBeforeItsSessionEnded(t)
}

// A bridge that gave up on a server that was only slow, a call of its
// client still in flight there, hands the client's session to the next
// bridge, which the election attaches to that same server. That bridge
// ends the session left there before it opens the client's again: not
// under the call in flight, which would be answered for a session that
// has ended, but once it has; and without waiting for it, however long it
// takes (longer than the bridge's probe timeout here), the session left
// giving up at once what the client's claims (its peer id, on the board).
func TestTheNextBridgeEndsNoLeftSessionUnderItsCall(t *testing.T) {
	s := newSlowCall(t)
	// its heartbeat gave up on the server; the election found it serving
	g := s.b.leave(errors.New("the shared server has answered no probe (stopped or frozen)"))
	b2, err := New(t.Context(), Config{URL: s.url, Secret: s.key, ProbeTimeout: 300 * time.Millisecond, Out: wire.NewFrameWriter(io.Discard),
		Logger: zap.NewNop(), Carried: g.Session})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b2.Close)
	if err := g.Session.Replay(s.ctx, b2); err != nil { // the call still held
		t.Fatalf("the client's session was not opened again: %v", err)
	}
	if told := s.leftWhenReopened.Load(); told == nil || !*told {
		t.Error("the client's session was opened again before the server was told the session left there leaves")
	}
	s.answeredBeforeItsSessionEnded(t)
}

// slowCall is a real server whose one tool, slow, runs until released, and
// a bridge whose client has a call of it in flight there.
type slowCall struct {
	url, key string
	b        *Bridge
	ctx      context.Context // the bound of every wait
	release  chan struct{}
	answered chan []byte   // the call's answer, through b
	ended    chan bool     // as each session ends, whether the call had ended then
	leaving  chan struct{} // closed once the server is told a session leaves (httpserver.Config.Leaving)
	// leftWhenReopened is, at the second initialize, whether it had been.
	leftWhenReopened atomic.Pointer[bool]
}

// newSlowCall serves slow and opens a session through a bridge whose call
// of it has reached the server.
func newSlowCall(t *testing.T) *slowCall {
	s := &slowCall{key: secret.New(), release: make(chan struct{}), answered: make(chan []byte, 1), ended: make(chan bool, 2),
		leaving: make(chan struct{})}
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	began := make(chan struct{})
	var callEnded, left atomic.Bool
	var initialized atomic.Int32
	hooks := &server.Hooks{}
	hooks.AddBeforeInitialize(func(context.Context, any, *mcp.InitializeRequest) {
		if initialized.Add(1) == 2 {
			told := left.Load()
			s.leftWhenReopened.Store(&told)
		}
	})
	hooks.AddOnUnregisterSession(func(context.Context, server.ClientSession) {
		select {
		case s.ended <- callEnded.Load():
		default:
		}
	})
	mcpServer := server.NewMCPServer("majordomus", "1", server.WithToolCapabilities(false), server.WithHooks(hooks))
	mcpServer.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer callEnded.Store(true)
		close(began)
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		return mcp.NewToolResultText("done"), nil
	})
	srv := httpserver.New(httpserver.Config{MCP: mcpServer, Secret: s.key,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Name: "majordomus", Leaseholder: true} }, Logger: zap.NewNop(),
		Leaving: func(string) {
			if !left.Swap(true) {
				close(s.leaving)
			}
		}})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	s.url = httpserver.URLOf(ln.Addr())
	if s.b, err = New(t.Context(), Config{URL: s.url, Secret: s.key, ProbeTimeout: 5 * time.Second,
		Out: wire.NewFrameWriter(io.Discard), Logger: zap.NewNop()}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.b.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	s.ctx = ctx
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	} {
		if _, err := s.b.Relay(ctx, json.RawMessage(msg)); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		answer, _ := s.b.Relay(ctx, json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`))
		s.answered <- answer
	}()
	select {
	case <-began:
	case <-ctx.Done():
		t.Fatal("the call never reached the server")
	}
	return s
}

// answeredBeforeItsSessionEnded releases the call and checks that its
// client was answered, and that its session ended after it.
func (s *slowCall) answeredBeforeItsSessionEnded(t *testing.T) {
	t.Helper()
	close(s.release)
	select {
	case answer := <-s.answered:
		if !strings.Contains(string(answer), `"done"`) {
			t.Errorf("the call in flight was answered %s", answer)
		}
	case <-s.ctx.Done():
		t.Fatal("the call in flight was never answered")
	}
	select {
	case callHadEnded := <-s.ended:
		if !callHadEnded {
			t.Fatal("the session left on the server was ended while a call of its client was in flight there")
		}
	case <-s.ctx.Done():
		t.Fatal("the session the bridge left was never ended")
	}
}
