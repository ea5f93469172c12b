package together

import (
	"context"
	"encoding/json"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A 2026-07-28 client's first tool call waits while its bridge asks the
// server for its tools (to know what it may resend). One the client
// cancels meanwhile is cancelled all the same: it is never sent, so it
// never runs, and it is answered nothing, as a call cancelled once sent is.
func TestAModernCallCancelledWhileTheBridgeLearnsTheToolsNeverRuns(t *testing.T) {
	f := newFixture()
	listing, release := make(chan struct{}), make(chan struct{})
	var asked atomic.Bool
	f.hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) {
		if asked.CompareAndSwap(false, true) { // the bridge's own asking
			close(listing)
			<-release
		}
	})
	var ran atomic.Int32
	f.hooks.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { ran.Add(1) })
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)

	type relayed struct {
		answer []byte
		err    error
	}
	done := make(chan relayed, 1)
	go func() {
		a, err := b.Relay(context.Background(), json.RawMessage(modernRequest(7, "tools/call", `{"name":"lookup","arguments":{"key":"k"}}`)))
		done <- relayed{a, err}
	}()
	select {
	case <-listing:
	case <-time.After(wait):
		t.Fatal("the bridge never asked the server for its tools")
	}
	cancel := json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if a, err := b.Relay(context.Background(), cancel); err != nil || a != nil {
		t.Fatalf("the cancellation was answered %s, %v", a, err)
	}
	close(release)
	var r relayed
	select {
	case r = <-done:
	case <-time.After(wait):
		t.Fatal("the cancelled call was never given up")
	}
	if r.answer != nil || r.err != nil || ran.Load() != 0 {
		t.Fatalf("a call its client cancelled while the bridge learned the tools ran %d times and was answered %s (%v)", ran.Load(), r.answer, r.err)
	}
}
