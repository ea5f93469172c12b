package together

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// cutListener closes each connection right after the server writes a
// chunk holding marker: the server died just after writing its answer,
// before it ended the response.
type cutListener struct {
	net.Listener
	marker string
}

func (l cutListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &cutConn{Conn: c, marker: l.marker}, nil
}

type cutConn struct {
	net.Conn
	marker string
}

func (c *cutConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if strings.Contains(string(b), c.marker) {
		c.Conn.Close()
	}
	return n, err
}

// An answer the server sent in full on an event stream is the call's
// outcome, even when the connection broke before the stream's end: the
// client is given it, not "outcome unknown".
func TestAnAnswerReadInFullBeforeTheStreamBrokeIsGiven(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	send := func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// a notification first: the answer then comes on an event stream
		_ = server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
			map[string]any{"progressToken": "p", "progress": 0.5})
		return mcp.NewToolResultText("sent " + r.GetString("what", "")), nil
	}
	tool := mcp.NewTool("send", mcp.WithString("what"), mcp.WithReadOnlyHintAnnotation(false), mcp.WithIdempotentHintAnnotation(false))
	f1.srv.AddTool(tool, send)
	f2.srv.AddTool(tool, send)
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	s1 := serveOn(t, cutListener{ln, "sent once"}, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.call("2", "tools/list", "")
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send","arguments":{"what":"once"},"_meta":{"progressToken":"p"}}}`)
	a, _ := c.answer("3")
	if !strings.Contains(a, "sent once") {
		t.Fatalf("the server answered the call in full (\"sent once\"), and the client was told %s", a)
	}
}
