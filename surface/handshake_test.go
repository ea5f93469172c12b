package surface

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
)

// An initialize is a handshake to greet exactly when mcp-go answers it as
// one: not one mcp-go takes for a 2026-07-28 request (which has no
// handshake), however its _meta is spelled or its params given.
func TestAHandshakeIsReadAsMCPGoReadsIt(t *testing.T) {
	f := newFixture(t)
	const legacy = `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}`
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + legacy + `}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + legacy + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + legacy + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + legacy + `,"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"params":{` + legacy + `}}`,
	} {
		sess := server.NewInProcessSession("", nil)
		answer, _ := json.Marshal(f.s.MCP.HandleMessage(f.s.MCP.WithContext(context.Background(), sess), json.RawMessage(msg)))
		_, handshake := ReadHandshake(json.RawMessage(msg))
		if answered := strings.Contains(string(answer), `"result"`); handshake != answered {
			t.Errorf("%s\nread as a handshake: %v; mcp-go answers %s", msg, handshake, answer)
		}
	}
}
