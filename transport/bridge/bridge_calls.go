package bridge

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// call is one message of what the client sent, with what the bridge needs
// to remember of it.
type call struct {
	raw    json.RawMessage
	env    wire.Envelope
	params json.RawMessage
	tool   string          // tools/call: the tool's name
	args   json.RawMessage // tools/call: its arguments
	// meta is its params' _meta, and version the revision that names:
	// 2026-07-28 requests carry both.
	meta    json.RawMessage
	version string
}

func readCalls(msg json.RawMessage) []call {
	members := wire.Members(msg)
	calls := make([]call, 0, len(members))
	for _, m := range members {
		var c struct {
			wire.Envelope
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(m, &c)
		cl := call{raw: m, env: c.Envelope, params: c.Params}
		cl.meta, cl.version = wire.MetaOf(c.Params)
		if c.Method == string(mcp.MethodToolsCall) {
			var p struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			}
			_ = json.Unmarshal(c.Params, &p)
			cl.tool, cl.args = p.Name, p.Arguments
		}
		calls = append(calls, cl)
	}
	return calls
}
