package together

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A 2026-07-28 client served in process hears only what its listen asks
// for, and a listen it cancels ends with no answer and no more
// notifications, as through a bridge.
func TestAModernLocalClientHearsOnlyWhatItsListenAsksFor(t *testing.T) {
	f := newFixture()
	c := runStdio(t, func(out *wire.FrameWriter) wire.Backend {
		l, err := stdio.NewLocal(context.Background(), f.srv, out, "stdio")
		if err != nil {
			t.Fatal(err)
		}
		return l
	})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
	if a := c.call("1", "server/discover", `{`+meta+`}`); !strings.Contains(a, `"result"`) {
		t.Fatalf("server/discover: %s", a)
	}
	f.srv.SendNotificationToAllClients("notifications/resources/list_changed", nil) // asked by nobody
	c.send(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	c.until(func(f string) bool { return strings.Contains(f, "notifications/subscriptions/acknowledged") })
	f.srv.SendNotificationToAllClients("notifications/resources/list_changed", nil)
	f.srv.SendNotificationToAllClients("notifications/tools/list_changed", nil)
	_, before := c.until(func(f string) bool { return strings.Contains(f, "notifications/tools/list_changed") })
	if strings.Contains(strings.Join(before, "\n"), "list_changed") {
		t.Fatalf("heard what it did not ask for: %s", before)
	}

	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) { // the listen's end clears its filter
		if _, active := f.session("stdio").(server.SessionWithSubscriptionFilter).SubscriptionFilter(); !active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled listen did not end")
		}
	}
	f.srv.SendNotificationToAllClients("notifications/tools/list_changed", nil)
	if err := f.srv.SendNotificationToSpecificClient("stdio", "notifications/message", map[string]any{"level": "error", "data": "marker"}); err != nil {
		t.Fatal(err)
	}
	_, before = c.until(func(f string) bool { return strings.Contains(f, `"marker"`) })
	if joined := strings.Join(before, "\n"); strings.Contains(joined, "list_changed") || strings.Contains(joined, `"id":5`) {
		t.Fatalf("after its listen was cancelled: %s", before)
	}
	if a := c.call("6", "tools/list", `{`+meta+`}`); !strings.Contains(a, `"result"`) {
		t.Fatalf("then tools/list: %s", a)
	}
}
