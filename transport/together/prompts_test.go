package together

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// promptServer serves one prompt with a required and an optional argument.
func promptServer() *server.MCPServer {
	srv := server.NewMCPServer("fixture", "0.0.1", server.WithPromptCapabilities(true))
	srv.AddPrompt(mcp.NewPrompt("review", mcp.WithArgument("change", mcp.RequiredArgument()), mcp.WithArgument("focus")),
		func(_ context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("review "+r.Params.Arguments["change"])),
			}), nil
		})
	return srv
}

// A prompts/get that leaves out a required argument, or gives one that
// shows nothing, is invalid params naming it, the same bytes from a local
// session, a POST and a batch; the rest is mcp-go's to answer.
func TestAPromptWithoutARequiredArgumentIsInvalidParams(t *testing.T) {
	srv := promptServer()
	local, err := stdio.NewLocal(context.Background(), srv, wire.NewFrameWriter(io.Discard), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	local.Handle(context.Background(), json.RawMessage(initRoots)) // a session that did not initialize is answered nothing but ping
	s := serveHTTP(t, httpserver.Config{MCP: srv})
	c := newClient(t, s.url)
	sid := c.initialize()

	get := func(args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"review"` + args + `}}`
	}
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"prompt 'review': argument 'change' is required"}}`
	for _, args := range []string{``, `,"arguments":{}`, `,"arguments":{"focus":"tests"}`, `,"arguments":{"change":" "}`, `,"arguments":{"change":null}`,
		`,"arguments":{"change":"\u200b"}`, `,"arguments":{"change":"\u2800\ufe0f"}`} { // blank as the surface says it (internal/blank)
		if got := local.Handle(context.Background(), json.RawMessage(get(args))); string(got) != want {
			t.Errorf("local %s: %s", args, got)
		}
		if resp, body := c.do("POST", "/mcp", sid, get(args)); resp.StatusCode != 200 || strings.TrimSpace(body) != want {
			t.Errorf("http %s: %d %s", args, resp.StatusCode, body)
		}
		if _, body := c.do("POST", "/mcp", sid, "["+get(args)+"]"); strings.TrimSpace(body) != "["+want+"]" {
			t.Errorf("batch %s: %s", args, body)
		}
	}

	// 2026-07-28 answers invalid params with 400, as mcp-go answers an
	// unknown prompt's
	missing := modernRequest(9, "prompts/get", `{"name":"review"}`)
	resp, body := c.do("POST", "/mcp", "", missing, modernHeaders("prompts/get", "review")...)
	nope, _ := c.do("POST", "/mcp", "", modernRequest(10, "prompts/get", `{"name":"nope"}`), modernHeaders("prompts/get", "nope")...)
	if resp.StatusCode != nope.StatusCode || !strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "argument 'change' is required") {
		t.Errorf("2026-07-28: %d %s; an unknown prompt is answered %d", resp.StatusCode, body, nope.StatusCode)
	}

	answered := local.Handle(context.Background(), json.RawMessage(get(`,"arguments":{"change":"HEAD"}`)))
	if !bytes.Contains(answered, []byte(`"text":"review HEAD"`)) {
		t.Errorf("a complete request: %s", answered)
	}
	unknown := local.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":8,"method":"prompts/get","params":{"name":"nope"}}`))
	if !bytes.Contains(unknown, []byte(`"code":-32602`)) || !bytes.Contains(unknown, []byte(`prompt 'nope' not found`)) {
		t.Errorf("an unknown prompt: %s", unknown)
	}
}

// A completion/complete that names no prompt the server has, no reference
// of a kind MCP knows, or no argument, is invalid params (MCP 2025-06-18,
// completion: "Invalid prompt name: -32602", "Missing required arguments:
// -32602"), the same bytes from a local session, a POST and a batch.
// mcp-go answers the first an empty completion, and the others -32600, as
// if the message were no request.
func TestACompletionOfNoPromptIsInvalidParams(t *testing.T) {
	srv := promptServer()
	server.WithCompletions()(srv)
	local, err := stdio.NewLocal(context.Background(), srv, wire.NewFrameWriter(io.Discard), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	local.Handle(context.Background(), json.RawMessage(initRoots))
	s := serveHTTP(t, httpserver.Config{MCP: srv})
	c := newClient(t, s.url)
	sid := c.initialize()

	complete := func(params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"completion/complete"` + params + `}`
	}
	refused := func(message string) string {
		return `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"` + message + `"}}`
	}
	noRef := refused("invalid params: completion/complete takes params.ref, a ref/prompt or a ref/resource")
	noArgument := refused("invalid params: completion/complete names the argument it completes in params.argument.name")
	for _, tc := range []struct{ params, want string }{
		{`,"params":{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"focus","value":""}}`, refused("prompt 'nope' not found")},
		{`,"params":{"ref":{"type":"ref/prompt"},"argument":{"name":"focus","value":""}}`, refused("prompt '' not found")},
		{``, noRef},
		{`,"params":{}`, noRef},
		{`,"params":{"ref":{"type":"ref/nope","name":"review"},"argument":{"name":"focus","value":""}}`, noRef},
		{`,"params":{"ref":{"type":"ref/prompt","name":"review"}}`, noArgument},
		{`,"params":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"value":"t"}}`, noArgument},
	} {
		if got := local.Handle(context.Background(), json.RawMessage(complete(tc.params))); string(got) != tc.want {
			t.Errorf("local %s: %s", tc.params, got)
		}
		if resp, body := c.do("POST", "/mcp", sid, complete(tc.params)); resp.StatusCode != 200 || strings.TrimSpace(body) != tc.want {
			t.Errorf("http %s: %d %s", tc.params, resp.StatusCode, body)
		}
		if _, body := c.do("POST", "/mcp", sid, "["+complete(tc.params)+"]"); strings.TrimSpace(body) != "["+tc.want+"]" {
			t.Errorf("batch %s: %s", tc.params, body)
		}
	}

	modern := modernRequest(9, "completion/complete", `{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"focus","value":""}}`)
	if resp, body := c.do("POST", "/mcp", "", modern, modernHeaders("completion/complete", "")...); resp.StatusCode != 400 ||
		!strings.Contains(body, `"code":-32602`) || !strings.Contains(body, "prompt 'nope' not found") {
		t.Errorf("2026-07-28: %d %s", resp.StatusCode, body)
	}

	answered := local.Handle(context.Background(), json.RawMessage(complete(`,"params":{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"focus","value":""}}`)))
	if !bytes.Contains(answered, []byte(`"completion":{"values":[]}`)) {
		t.Errorf("a completion of a prompt the server has: %s", answered)
	}
}
