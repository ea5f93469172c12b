package together

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

const initRoots = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bridged","version":"1"}}}`

func lookup(key string) string {
	return `{"name":"lookup","arguments":{"key":"` + key + `"}}`
}

func TestABridgedSessionIsRelayed(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := runStdio(t, bridgeTo(t, s.url, nil))
	if a := c.open(initRoots); !strings.Contains(a, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize answered %s", a)
	}
	if a := c.call("2", "tools/list", ""); !strings.Contains(a, `"name":"lookup"`) {
		t.Fatalf("tools/list answered %s", a)
	}
	if a := c.call("3", "tools/call", lookup("k")); !strings.Contains(a, "value of k") {
		t.Fatalf("tools/call answered %s", a)
	}
	s.count.waitFor(t, 1)

	listChanged(t, f, c)

	// after a notification mcp-go answers every POST of the session with an event stream
	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"notify"}}`)
	c.until(func(f string) bool { return strings.Contains(f, `"method":"notifications/progress"`) })
	if a, _ := c.answer("4"); !strings.Contains(a, "notified") {
		t.Fatalf("notify answered %s", a)
	}
	if a := c.call("5", "tools/call", lookup("sse")); !strings.Contains(a, "value of sse") {
		t.Fatalf("tools/call over SSE answered %s", a)
	}
	// a batch is relayed as a batch
	c.send(`[{"jsonrpc":"2.0","id":6,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"no/such"}]`)
	batch, _ := c.until(func(f string) bool { return strings.HasPrefix(f, "[") })
	var answers []map[string]any
	if err := json.Unmarshal([]byte(batch), &answers); err != nil || len(answers) != 2 {
		t.Fatalf("batch answered %s", batch)
	}
}

func TestAServerRequestIsRelayedOverTheStream(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := runStdio(t, bridgeTo(t, s.url, nil))
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots"}}`)
	req, _ := c.until(func(f string) bool { return strings.Contains(f, `"method":"roots/list"`) })
	var r struct{ ID json.RawMessage }
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(r.ID) + `,"result":{"roots":[{"uri":"file:///checkout","name":"main"}]}}`)
	if a, _ := c.answer("2"); !strings.Contains(a, "root file:///checkout") {
		t.Fatalf("roots answered %s", a)
	}
}

func TestARestartedServerIsReinitializedTransparently(t *testing.T) {
	f1 := newFixture()
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	s1 := serveOn(t, ln, httpserver.Config{MCP: f1.srv})
	obs, logs := observer.New(zapcore.InfoLevel)
	c := runStdio(t, bridgeTo(t, s1.url, zap.New(obs)))
	c.open(initRoots)
	before := c.call("2", "tools/list", "")
	c.call("3", "tools/call", `{"name":"majordomus_announce","arguments":{"intent":"refactor","scope":["a/"]}}`)
	if got := <-f1.announces; got != `{"intent":"refactor","scope":["a/"]}` {
		t.Fatalf("announced %s", got)
	}

	s1.stop() // the server forgets every session
	f2 := newFixture()
	ln2, err := httpserver.Listen("127.0.0.1", port, nil)
	if err != nil || ln2.Addr().(*net.TCPAddr).Port != port {
		t.Fatalf("cannot bind the same port again: %v", err)
	}
	s2 := serveOn(t, ln2, httpserver.Config{MCP: f2.srv})

	c.send(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	after, seen := c.answer("4")
	if strings.Replace(after, `"id":4`, `"id":2`, 1) != before {
		t.Fatalf("tools/list after the restart answered\n%s\nbefore\n%s", after, before)
	}
	for _, f := range seen {
		if strings.Contains(f, carry.ReinitializeID) || strings.Contains(f, carry.AnnounceID) {
			t.Fatalf("the client saw the bridge's own traffic: %s", f)
		}
	}
	select {
	case got := <-f2.announces:
		if got != `{"intent":"refactor","scope":["a/"]}` {
			t.Fatalf("replayed %s", got)
		}
	case <-time.After(wait):
		t.Fatal("the announcement was not replayed to the restarted server")
	}
	s2.count.waitFor(t, 1)
	if logs.FilterMessage("session re-opened on the shared server").Len() != 1 {
		t.Fatalf("re-opening logged %d times", logs.FilterMessage("session re-opened on the shared server").Len())
	}
}

func TestCloseEndsTheSession(t *testing.T) {
	obs, logs := observer.New(zapcore.InfoLevel)
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(obs)})
	var br *bridge.Bridge
	c := runStdio(t, func(out *wire.FrameWriter) wire.Backend {
		br = bridgeTo(t, s.url, nil)(out).(*bridge.Bridge)
		return br
	})
	c.open(initRoots)
	c.call("2", "ping", "")
	s.count.waitFor(t, 1)
	c.close()
	br.Close()
	br.Close() // idempotent
	s.count.waitFor(t, 0)
	closed := logs.FilterMessage("http session closed").All()
	if len(closed) != 1 || closed[0].ContextMap()["reason"] != "delete" {
		t.Fatalf("closing logged as %v", closed)
	}
}

func TestBridgedAndLocalSessionsAnswerTheSame(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	requests := []struct{ method, params string }{
		{"tools/list", ""},
		{"resources/list", ""},
		{"resources/read", `{"uri":"fixture://a"}`},
		{"tools/call", lookup("same")},
	}
	compare := func(round int) {
		for i, r := range requests {
			id := strconv.Itoa(10*round + i + 2)
			if b, l := bridged.call(id, r.method, r.params), local.call(id, r.method, r.params); b != l {
				t.Errorf("round %d, %s:\nbridged %s\nlocal   %s", round, r.method, b, l)
			}
		}
	}
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	compare(0)
	listChanged(t, f, bridged, local) // the HTTP session's answers become event streams
	compare(1)
}

func TestAfterANotificationAnswersAreEventStreams(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	c := newClient(t, s.url)
	sid := c.initialize()
	f.srv.SendNotificationToAllClients("notifications/resources/list_changed", nil)
	resp, body := c.do(http.MethodPost, "/mcp", sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	// The upgrade to event streams is decided when the notification is
	// queued, so it is certain; whether this answer also carries the
	// notification is not: mcp-go's forwarder of the initialize POST may
	// still take it off the session's queue and drop it (see doc.go).
	if !wire.IsEventStream(resp.Header) || !strings.Contains(body, `"id":2,"result"`) {
		t.Fatalf("%s: %s", resp.Header.Get("Content-Type"), body)
	}
}
