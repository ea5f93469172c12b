package wire

import "time"

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
