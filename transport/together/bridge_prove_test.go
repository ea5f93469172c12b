package together

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// A process that took a dead server's port cannot prove it holds the
// lease's secret: the bridge sends it nothing for /mcp — not the stream it
// opens again, not the client's next message, which fails over as not run
// — and nothing it says reaches the client (docs/security.md).
func TestAnImpostorOnTheServersPortIsSentNothing(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	s1 := serveOn(t, ln, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.call("2", "tools/list", "")
	s1.kill()

	var mu sync.Mutex
	var asked []string
	probed := make(chan struct{}, 64)
	impostor := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/" {
			select {
			case probed <- struct{}{}:
			default:
			}
			_, _ = w.Write([]byte(`{"name":"majordomus","leaseholder":true,"proof":"0123"}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"error\",\"data\":\"injected\"}}\n\n"))
	}))
	iln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the impostor cannot take the port: %v", err)
	}
	impostor.Listener = iln
	impostor.Start()
	t.Cleanup(impostor.Close)
	select {
	case <-probed: // the stream, to be opened again, asked for a proof first
	case <-time.After(wait):
		t.Fatal("the bridge asked the impostor for no proof")
	}

	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":` + lookup("after") + `}`)
	answer, seen := c.answer("3")
	if !strings.Contains(answer, "value of after") {
		t.Fatalf("the next message was answered %s", answer)
	}
	if call := fo.next(); !strings.Contains(call.cause.Error(), "did not prove") {
		t.Fatalf("it failed over because %v", call.cause)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		if a != "GET /" {
			t.Errorf("the impostor was asked %s", a)
		}
	}
	for _, f := range seen {
		if strings.Contains(f, "injected") {
			t.Errorf("the client was sent what the impostor said: %s", f)
		}
	}
}
