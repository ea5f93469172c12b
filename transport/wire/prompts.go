package wire

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/internal/blank"
)

// PromptRefusal answers a prompts/get request that leaves out, or leaves
// blank, an argument its prompt declares required: -32602 naming both, as
// MCP asks; and one its prompt's handler refuses, -32602 with the
// handler's words. mcp-go v1.2.1 checks no prompt argument and answers
// every error of a prompt handler -32603, so both transports (the local
// session and the HTTP server) ask this before mcp-go sees the request. It answers a
// completion/complete that names no prompt the server has, no reference of
// a kind MCP knows, or no argument, -32602 too (MCP's completion: "Invalid
// prompt name", "Missing required arguments"), which mcp-go answers an
// empty completion or -32600. It returns nil for anything else, which
// mcp-go answers: another message, a prompt it does not know, params it
// cannot read.
func PromptRefusal(srv *server.MCPServer, env Envelope, msg json.RawMessage) []byte {
	if len(env.ID) == 0 {
		return nil
	}
	switch env.Method {
	case string(mcp.MethodPromptsGet):
		return argumentRefusal(srv, env, msg)
	case string(mcp.MethodCompletionComplete):
		return completionRefusal(srv, env, msg)
	}
	return nil
}

// argumentRefusal is PromptRefusal's answer to a prompts/get.
func argumentRefusal(srv *server.MCPServer, env Envelope, msg json.RawMessage) []byte {
	var req struct {
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil {
		return nil
	}
	p, ok := srv.ListPrompts()[req.Params.Name]
	if !ok {
		return nil
	}
	for _, a := range p.Prompt.Arguments {
		v, given := req.Params.Arguments[a.Name]
		s, isText := v.(string)
		if a.Required && (!given || v == nil || isText && blank.Is(s)) {
			return ErrorFrame(env.ID, mcp.INVALID_PARAMS, fmt.Sprintf("prompt '%s': argument '%s' is required", p.Prompt.Name, a.Name))
		}
	}
	// A prompt's handler refuses nothing but what the request asks (values
	// that make its text too large), which mcp-go would answer -32603, a
	// failure of the server's own: asked here first, its refusal is the
	// request's. What it answers is asked again as mcp-go answers.
	get := mcp.GetPromptRequest{}
	get.Params.Name, get.Params.Arguments = req.Params.Name, make(map[string]string, len(req.Params.Arguments))
	for k, v := range req.Params.Arguments {
		if s, ok := v.(string); ok {
			get.Params.Arguments[k] = s
		}
	}
	if _, err := p.Handler(context.Background(), get); err != nil {
		return ErrorFrame(env.ID, mcp.INVALID_PARAMS, err.Error())
	}
	return nil
}

// The kinds of reference a completion/complete names.
const (
	refPrompt   = "ref/prompt"
	refResource = "ref/resource"
)

// completionRefusal is PromptRefusal's answer to a completion/complete,
// its params read as mcp-go reads them.
func completionRefusal(srv *server.MCPServer, env Envelope, msg json.RawMessage) []byte {
	var req struct {
		Params struct {
			Ref *struct {
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"ref"`
			Argument *struct {
				Name string `json:"name"`
			} `json:"argument"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &req) != nil {
		return nil // Screen answers what does not read
	}
	ref, arg := req.Params.Ref, req.Params.Argument
	switch {
	case ref == nil || ref.Type != refPrompt && ref.Type != refResource:
		return ErrorFrame(env.ID, mcp.INVALID_PARAMS, "invalid params: completion/complete takes params.ref, a ref/prompt or a ref/resource")
	case arg == nil || arg.Name == "":
		return ErrorFrame(env.ID, mcp.INVALID_PARAMS, "invalid params: completion/complete names the argument it completes in params.argument.name")
	}
	if _, ok := srv.ListPrompts()[ref.Name]; ref.Type == refPrompt && !ok {
		return ErrorFrame(env.ID, mcp.INVALID_PARAMS, fmt.Sprintf("prompt '%s' not found", ref.Name))
	}
	return nil
}
