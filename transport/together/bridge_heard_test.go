package together

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// A subscription under way when the bridge leaves its server, and which
// that server still grants as it drains (a graceful stop answers the calls
// under way), is carried: the client was told it is subscribed, so the
// next server hears the subscription, and its updates reach the client.
func TestASubscriptionGrantedAfterItsBridgeLeftIsCarried(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f1.hooks.AddBeforeSubscribe(func(context.Context, any, *mcp.SubscribeRequest) {
		once.Do(func() { close(entered); <-release })
	})
	subscribed := make(chan string, 4)
	f2.hooks.AddAfterSubscribe(func(_ context.Context, _ any, r *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
		subscribed <- r.Params.URI
	})
	closing := make(chan struct{})
	var closed sync.Once
	logger := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel), zap.Hooks(func(e zapcore.Entry) error {
		if strings.HasPrefix(e.Message, "shutting down") {
			closed.Do(func() { close(closing) })
		}
		return nil
	}))
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv, Logger: logger})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.bridge(s1.url))
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":7,"method":"resources/subscribe","params":{"uri":"fixture://a"}}`)
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the subscription never reached the server")
	}
	go s1.stop() // graceful: the subscription under way is granted, the rest refused
	select {
	case <-closing:
	case <-time.After(wait):
		t.Fatal("the server did not start shutting down")
	}
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":` + lookup("k") + `}`)
	fo.next()
	if a, _ := c.answer("8"); !strings.Contains(a, "value of k") {
		t.Fatalf("the call after the stop was answered %s", a)
	}
	close(release)
	if a, _ := c.answer("7"); !strings.Contains(a, `"result":{}`) {
		t.Fatalf("the subscription was answered %s", a)
	}
	select {
	case uri := <-subscribed:
		if uri != "fixture://a" {
			t.Fatalf("the next server was subscribed to %s", uri)
		}
	case <-time.After(wait):
		t.Fatal("the client was told it is subscribed to fixture://a, and the server that serves it now never heard of it")
	}
}
