package wire

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Codes of the JSON error bodies the HTTP server answers with
// ({"error":{"code":"<code>","message":"<text>"}}).
const (
	ErrCodeFull          = "full" // no new session: the server has its most (503, Retry-After)
	ErrCodeLeaseLost     = "lease_lost"
	CodeLeaseLost    int = -32001 // JSON-RPC code of a refused initialize
	// CodeLeaseLostModern refuses a 2026-07-28 request: that revision asks
	// new implementations not to use -32000…-32019.
	CodeLeaseLostModern int = -32040
)

// HTTPError is the body of every refusal of the HTTP server.
type HTTPError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		// Sessions is, for ErrCodeFull, how many sessions the server has.
		Sessions int `json:"sessions,omitempty"`
	} `json:"error"`
}

// LeaseHeader is set to "lost" on the /mcp answers of a server that no
// longer holds the checkout's lease.
const LeaseHeader = "Majordomus-Lease"

// DefaultIdleTimeout is how long a server keeps a session its client sent
// nothing on, and so how long a bridge may count on a session it left.
const DefaultIdleTimeout = 90 * time.Second

// NamesInBody marks a bridge's POST of a 2026-07-28 request whose method,
// name or protocol version no header carries as its client wrote them
// (spaces around them, control characters, a name longer than a request's
// head may be): it goes without Mcp-Method and Mcp-Name, with that
// revision for its version, and the server takes all three from the body
// (NamesFromBody), so that mcp-go answers the request as it does in
// process (R8), not as a header mismatch.
const NamesInBody = "Majordomus-Names-In-Body"

// maxNameHeader bounds the Mcp-Method, Mcp-Name and MCP-Protocol-Version
// a bridge sends, each: the server reads at most 64 KiB of a request's head.
const maxNameHeader = 16 << 10

// SetNames sets on h, the header of a POST of a 2026-07-28 request, the
// method and the name of what a tools/call, prompts/get or resources/read
// is about (encoded when it is not plain ASCII), or NamesInBody.
func SetNames(h http.Header, method string, params json.RawMessage) {
	name, named := mcp.ExtractHeaderName(mcp.MCPMethod(method), params)
	v, ok := mcp.EncodeHeaderValue(name)
	_, version := MetaOf(params)
	if !plainHeader(method) || !plainHeader(version) || len(method) > maxNameHeader || len(version) > maxNameHeader ||
		named && ok && len(v) > maxNameHeader {
		h.Set(NamesInBody, "1")
		h.Set(mcp.HeaderProtocolVersion, mcp.ProtocolVersion20260728)
		return
	}
	h.Set(mcp.HeaderMethod, method)
	if named && ok {
		h.Set(mcp.HeaderName, v)
	}
}

// NamesFromBody sets on h, the header of a POST that carries NamesInBody
// and neither Mcp-Method nor Mcp-Name, the method and name its body gives.
func NamesFromBody(h http.Header, method string, params json.RawMessage) {
	if h.Get(NamesInBody) == "" || h.Get(mcp.HeaderMethod) != "" || h.Get(mcp.HeaderName) != "" {
		return // a request sends its names one way, never both
	}
	h.Set(mcp.HeaderMethod, method)
	if name, ok := mcp.ExtractHeaderName(mcp.MCPMethod(method), params); ok {
		if v, ok := mcp.EncodeHeaderValue(name); ok {
			h.Set(mcp.HeaderName, v)
		}
	}
	// Only a version of the revision the request was routed as: another
	// would make it be served as a session's, past the session table.
	if _, version := MetaOf(params); mcp.IsModernProtocol(version) {
		h.Set(mcp.HeaderProtocolVersion, version)
	}
}

// plainHeader reports whether s goes in a header as it is.
func plainHeader(s string) bool {
	plain, _ := mcp.EncodeHeaderValue(s)
	return plain == s
}
