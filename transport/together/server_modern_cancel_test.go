package together

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// A bridged 2026-07-28 client's notifications/cancelled still
// cancels its own call on the server (the bridge closes the stream).
func TestABridgedModernCancellationStillCancelsItsCall(t *testing.T) {
	f := newFixture()
	calls := make(chan context.Context, 1)
	f.srv.AddTool(mcp.NewTool("hang", mcp.WithReadOnlyHintAnnotation(true)),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls <- ctx
			<-ctx.Done()
			return mcp.NewToolResultText("hung"), nil
		})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := runStdio(t, bridgeTo(t, s.url, nil))
	c.send(modernRequest(7, "tools/call", `{"name":"hang"}`))
	ctx := <-calls
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the bridged client's cancellation did not reach its call")
	}
	c.send(modernRequest(8, "tools/list", ""))
	if a, _ := c.answer("8"); !strings.Contains(a, `"tools"`) {
		t.Fatalf("after: %s", a)
	}
}
