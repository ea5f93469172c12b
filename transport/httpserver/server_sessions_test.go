package httpserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// An initialize answered with an error, or sent without an id or with a
// result (a notification, an answer: accepted 202 with nothing), keeps no
// session id in the table; the tests of the transport as a whole check the
// rest (the count, and the MCP server's sessions).
func TestARefusedInitializeKeepsNoID(t *testing.T) {
	ln, err := Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := secret.New()
	s := New(Config{MCP: server.NewMCPServer("t", "1"), Secret: key, Logger: zap.NewNop()})
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	defer func() { _ = s.Shutdown(context.Background()); <-done }()
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	const params = `"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`
	for i := range 300 {
		body := []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":"not params"}`,
			`{"jsonrpc":"2.0","method":"initialize",` + params + `}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","result":{},` + params + `}`,
		}[i%3]
		req, _ := http.NewRequest(http.MethodPost, URLOf(ln.Addr())+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", secret.Authorization(key))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s was given a session", body)
		}
	}
	s.table.mu.Lock()
	defer s.table.mu.Unlock()
	if n := len(s.table.entries); n != 0 {
		t.Fatalf("after 100 invalid initializes, 100 without an id and 100 with a result, %d ids kept", n)
	}
}

// A request that comes as its session idles out (the timer has decided,
// and the session's end is under way) is not run on it: the session is
// ended, as its request would otherwise see midway.
func TestARequestOnASessionIdlingOutIsNotRun(t *testing.T) {
	expiring, ended := make(chan string), make(chan struct{})
	table := newSessionTable(zap.NewNop(), nil, time.Millisecond, func(id string) {
		expiring <- id
		<-ended // the session's end, under way
	})
	id := table.Generate()
	p, _ := table.admit(1)
	table.markLive(id, p)
	if got := <-expiring; got != id {
		t.Fatalf("%s idled out, not %s", got, id)
	}
	defer close(ended)
	if end := table.begin(id); end != nil {
		end()
		t.Fatal("a request began on a session whose end was under way")
	}
}
