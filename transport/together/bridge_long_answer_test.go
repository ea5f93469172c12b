package together

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// An answer longer than a stdio line may be (16 MiB: an 8 MiB layer
// object whose characters JSON escapes makes one) is relayed whole once
// the session's answers are event streams, alone or in a batch, as a
// local session writes it: the bridge does not take it for a server
// whose answer broke off.
func TestALongAnswerIsRelayedWholeAsAnEvent(t *testing.T) {
	f := newFixture()
	long := strings.Repeat("x", 17<<20)
	f.srv.AddTool(mcp.NewTool("long", mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(long), nil
		})
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	listChanged(t, f, bridged, local) // the HTTP session's answers become event streams
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"long"}}`
	for _, line := range []string{call, "[" + call + "]"} {
		bridged.send(line)
		local.send(line)
		b, _ := bridged.answer("2")
		l, _ := local.answer("2")
		if b != l {
			t.Errorf("%.40s…: bridged %d bytes %.200s…, local %d bytes %.200s…", line, len(b), b, len(l), l)
		}
	}
}
