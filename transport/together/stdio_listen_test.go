package together

import (
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// A 2026-07-28 client served in process hears only what its listen asks
// for, and a listen it cancels ends with no answer and no more
// notifications, as through a bridge.
func TestAModernLocalClientHearsOnlyWhatItsListenAsksFor(t *testing.T) {
	f := newFixture()
	c := runStdio(t, localTo(t, f))
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

// A 2026-07-28 client served in process with two listens open hears
// through each what that one asks for, tagged with its id, and through
// the one left what it asks for once the other is cancelled: over HTTP
// each listen is a session of its own. Its id is read as mcp-go reads it
// (5.0 tags as 5).
func TestEachListenOfALocalClientHearsWhatItAsks(t *testing.T) {
	f := newFixture()
	c := runStdio(t, localTo(t, f))
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
	c.call("1", "server/discover", `{`+meta+`}`)
	for _, listen := range []string{`"id":5.0,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`, `"id":7,"method":"subscriptions/listen","params":{"notifications":{"resourcesListChanged":true},`} {
		c.send(`{"jsonrpc":"2.0",` + listen + meta + `}}`)
		c.until(func(f string) bool { return strings.Contains(f, "notifications/subscriptions/acknowledged") })
	}
	const tagged = `"io.modelcontextprotocol/subscriptionId":`
	heard := func() (tools []string) {
		f.srv.SendNotificationToAllClients("notifications/tools/list_changed", nil)
		f.srv.SendNotificationToAllClients("notifications/resources/list_changed", nil)
		resources, before := c.until(func(f string) bool { return strings.Contains(f, "notifications/resources/list_changed") })
		if !strings.Contains(resources, tagged+"7}") {
			t.Fatalf("resources/list_changed is not tagged with its listen's id: %s", resources)
		}
		for _, f := range before {
			if strings.Contains(f, "list_changed") {
				tools = append(tools, f)
			}
		}
		c.backlog = nil // taken
		return tools
	}
	if tools := heard(); len(tools) != 1 || !strings.Contains(tools[0], "notifications/tools/list_changed") || !strings.Contains(tools[0], tagged+"5}") {
		t.Fatalf("with both listens open, heard %q; want tools/list_changed once, through listen 5", tools)
	}

	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)
	for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) { // the listen's end clears its filter
		if filter, _ := f.session("stdio").(server.SessionWithSubscriptionFilter).SubscriptionFilter(); !filter.ToolsListChanged {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancelled listen did not end")
		}
	}
	if tools := heard(); len(tools) != 0 {
		t.Fatalf("once listen 5 was cancelled, heard %q", tools)
	}
}

// A listen whose method and keys are spelled with escapes
// (`subscriptions\/listen`, as PHP writes a slash) is a listen to the loop
// as it is to mcp-go: what it hears is tagged with its id, and the loop
// ends with its input, not held by a listen it would not have known.
func TestAListenSpelledWithEscapesEndsWithTheInput(t *testing.T) {
	f := newFixture()
	c := runStdio(t, localTo(t, f))
	const meta = `"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol\/clientCapabilities":{},"io.modelcontextprotocol\/clientInfo":{"name":"modern","version":"1"}}`
	c.call("1", "server/discover", `{`+meta+`}`)
	c.send(`{"jsonrpc":"2.0","id":5,"method":"subscriptions\/listen","params":{"notifications":{"toolsListChanged":true},` + meta + `}}`)
	c.until(func(f string) bool { return strings.Contains(f, "notifications/subscriptions/acknowledged") })
	f.srv.SendNotificationToAllClients("notifications/tools/list_changed", nil)
	if heard, _ := c.until(func(f string) bool { return strings.Contains(f, "notifications/tools/list_changed") }); !strings.Contains(heard, `"io.modelcontextprotocol/subscriptionId":5`) {
		t.Errorf("the listen heard, untagged: %s", heard)
	}
	c.close() // fails the test unless the loop ends with its input
}

// A listen is cancelled by its id however its client spells it there, as
// mcp-go reads ids: 5.0 names the listen 5, and "\u0061" the listen "a";
// and by a cancel in a batch.
// Bridged, its stream closes; in process, it is answered nothing.
func TestAListenIsCancelledByItsIdHoweverItIsSpelled(t *testing.T) {
	cancelling := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`
	}
	for _, tc := range []struct{ id, spelled, cancel string }{
		{"5", "5.0", cancelling("5.0")},
		{`"a"`, `"\u0061"`, cancelling(`"\u0061"`)},
		{"7", "7 in a batch", "[" + cancelling("7") + "," + cancelling("99") + "]"},
	} {
		f := newFixture()
		s := serveHTTP(t, httpserver.Config{MCP: f.srv})
		listen := strings.Replace(modernRequest(0, "subscriptions/listen", `{"notifications":{"toolsListChanged":true}}`), `"id":0`, `"id":`+tc.id, 1)
		cancel := tc.cancel
		bridged := runStdio(t, bridgeTo(t, s.url, nil))
		bridged.send(listen)
		s.count.waitFor(t, 1)
		bridged.send(cancel)
		s.count.waitFor(t, 0)

		local := runStdio(t, localTo(t, f))
		local.send(listen)
		local.until(func(f string) bool { return strings.Contains(f, "notifications/subscriptions/acknowledged") })
		local.send(cancel)
		for deadline := time.Now().Add(wait); ; time.Sleep(time.Millisecond) { // the listen's end clears its filter
			if _, active := f.session("stdio").(server.SessionWithSubscriptionFilter).SubscriptionFilter(); !active {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the listen cancelled as %s did not end", tc.id, tc.spelled)
			}
		}
		local.send(modernRequest(6, "tools/list", ""))
		_, before := local.answer("6")
		for _, f := range before {
			if strings.Contains(f, `"id":`+tc.id+`,`) {
				t.Errorf("the listen cancelled as %s was answered: %s", tc.spelled, f)
			}
		}
	}
}
