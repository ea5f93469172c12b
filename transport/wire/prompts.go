package wire

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/internal/blank"
)

// PromptRefusal answers a prompts/get request that leaves out, or leaves
// blank, an argument its prompt declares required: -32602 naming both, as
// MCP asks. mcp-go v1.2.1 checks no prompt argument and answers every error
// of a prompt handler -32603, so both transports (the local session and the
// HTTP server) ask this before mcp-go sees the request. It returns nil for
// anything else, which mcp-go answers: another message, a prompt it does
// not know, params it cannot read.
func PromptRefusal(srv *server.MCPServer, env Envelope, msg json.RawMessage) []byte {
	if env.Method != string(mcp.MethodPromptsGet) || len(env.ID) == 0 {
		return nil
	}
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
	return nil
}
