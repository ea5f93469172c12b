package surface

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testIdle is the idle timeout the tests' surfaces are given.
const testIdle = 90 * time.Second

// fixture is a Surface over the example checkout with in-process sessions.
type fixture struct {
	t    *testing.T
	root string
	lay  *layer.Layer
	s    *Surface
	proc Process
}

func newFixture(t *testing.T) *fixture { return newFixtureOf(t, layer.Config{}) }

// newFixtureOf is newFixture with the layer configured as cfg (its Root,
// unless set, a new copy of the example) and the surface's Config set by
// each of with.
func newFixtureOf(t *testing.T, cfg layer.Config, with ...func(*Config)) *fixture {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = testtemp.Dir(t)
		if err := example.WriteCheckout(cfg.Root); err != nil {
			t.Fatal(err)
		}
	}
	root := cfg.Root
	lay, err := layer.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, root: root, lay: lay, proc: Process{Role: "standalone", Profile: "default"}}
	sc := Config{Layer: lay, Version: "9.9.9", Process: func() Process { return f.proc }, IdleTimeout: testIdle, Carrying: carryingTest}
	for _, w := range with {
		w(&sc)
	}
	f.s = New(sc)
	return f
}

// client is one in-process session on the fixture's server.
type client struct {
	f    *fixture
	sess *server.InProcessSession
}

func (f *fixture) connect(name string) *client {
	f.t.Helper()
	sess := server.NewInProcessSession(name+"-session", nil)
	if err := f.s.MCP.RegisterSession(context.Background(), sess); err != nil {
		f.t.Fatal(err)
	}
	c := &client{f: f, sess: sess}
	res := c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1.0"}})
	var init mcp.InitializeResult
	mustDecode(f.t, res, &init)
	return c
}

func (c *client) leave() { c.f.s.MCP.UnregisterSession(context.Background(), c.sess.SessionID()) }

// rpc sends one request and returns its result, failing on a JSON-RPC error.
func (c *client) rpc(method string, params any) json.RawMessage {
	c.f.t.Helper()
	result, rpcErr := c.try(method, params)
	if rpcErr != "" {
		c.f.t.Fatalf("%s: %s", method, rpcErr)
	}
	return result
}

func (c *client) try(method string, params any) (json.RawMessage, string) {
	result, _, message := c.call(method, params)
	return result, message
}

// carryingKey marks a test's message as what carries a session sends it
// (Config.Carrying), as a bridge's or a process's replay is marked.
type carryingKey struct{}

func carryingTest(ctx context.Context) bool { return ctx.Value(carryingKey{}) != nil }

// carried is a context under which a message carries a session.
func carried() context.Context { return context.WithValue(context.Background(), carryingKey{}, true) }

// carry sends one request as what carries the client's session sends it,
// and returns its result, failing on a JSON-RPC error.
func (c *client) carry(method string, params any) json.RawMessage {
	c.f.t.Helper()
	result, _, message := c.f.handle(carried(), c.sess, method, params)
	if message != "" {
		c.f.t.Fatalf("%s: %s", method, message)
	}
	return result
}

// call sends one request and returns its result, or its error's code and
// message.
func (c *client) call(method string, params any) (result json.RawMessage, code int, message string) {
	return c.f.handle(context.Background(), c.sess, method, params)
}

// handle sends one request on sess (nil: none) under ctx and returns its
// result, or its error's code and message.
func (f *fixture) handle(ctx context.Context, sess server.ClientSession, method string, params any) (result json.RawMessage, code int, message string) {
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if sess != nil {
		ctx = f.s.MCP.WithContext(ctx, sess)
	}
	answer, _ := json.Marshal(f.s.MCP.HandleMessage(ctx, msg))
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	mustDecode(f.t, answer, &r)
	if r.Error != nil {
		return nil, r.Error.Code, r.Error.Message
	}
	return r.Result, 0, ""
}

// tool calls a tool; it returns the structured content or the error text.
func (c *client) tool(name string, args map[string]any) (structured json.RawMessage, errText string) {
	c.f.t.Helper()
	return c.f.toolResult(name, c.rpc("tools/call", map[string]any{"name": name, "arguments": args}))
}

// toolResult reads the result of a call of the tool name: its structured
// content, or its error text.
func (f *fixture) toolResult(name string, result json.RawMessage) (structured json.RawMessage, errText string) {
	f.t.Helper()
	var res struct {
		IsError           bool `json:"isError"`
		Content           []struct{ Text string }
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	mustDecode(f.t, result, &res)
	if res.IsError {
		return nil, res.Content[0].Text
	}
	var text, same any
	if len(res.Content) != 1 || json.Unmarshal([]byte(res.Content[0].Text), &text) != nil ||
		json.Unmarshal(res.StructuredContent, &same) != nil || !reflect.DeepEqual(text, same) {
		f.t.Fatalf("%s: the text content must be the structured content as JSON", name)
	}
	return res.StructuredContent, ""
}

func mustDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
}

// drain returns the methods of the notifications queued for a session.
// mcp-go queues them before the sending call returns, so nothing is awaited.
func drain(s *server.InProcessSession) map[string]bool {
	got := map[string]bool{}
	for {
		select {
		case n := <-s.ClientNotifications():
			got[n.Method] = true
		default:
			return got
		}
	}
}
