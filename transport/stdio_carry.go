package transport

import (
	"bytes"
	"encoding/json"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// A local session can be carried too: a lease-lost leaseholder hands its
// own client over to the current server (SPEC §6, convergence) the way a
// bridge carries its client after a failover. Local records what a
// carried session is made of as its client's messages are answered.

// sessionRecord is what Local has seen of its client's session.
type sessionRecord struct {
	mu      sync.Mutex
	carried Carried
	safe    map[string]bool
}

// note records what one message and its answer say of the session. Only
// the few messages that make a session are decoded — initialize,
// tools/list and the announcement — so that every other message costs the
// comparison of its method, which the caller already read.
func (r *sessionRecord) note(method string, msg json.RawMessage, answer []byte) {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	switch method {
	case string(mcp.MethodInitialize), string(mcp.MethodToolsList):
	case string(mcp.MethodToolsCall):
		if json.Unmarshal(msg, &m) != nil || json.Unmarshal(m.Params, &call) != nil || call.Name != AnnounceTool {
			return
		}
	default:
		return
	}
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if answer == nil || json.Unmarshal(answer, &a) != nil || len(a.Error) > 0 || len(a.Result) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch method {
	case string(mcp.MethodInitialize):
		var res struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Meta            map[string]any `json:"_meta"`
		}
		_ = json.Unmarshal(a.Result, &res)
		_ = json.Unmarshal(msg, &m)
		peer, _ := res.Meta[PeerMeta].(string)
		r.carried = Carried{Initialize: bytes.Clone(m.Params), Protocol: res.ProtocolVersion, Peer: peer}
	case string(mcp.MethodToolsList):
		if r.safe == nil {
			r.safe = map[string]bool{}
		}
		safeToResend(r.safe, a.Result)
	default: // the announcement
		var res struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(a.Result, &res) == nil && !res.IsError {
			r.carried.Announce = bytes.Clone(call.Arguments)
		}
	}
}

// Carried is the client's session as this local session saw it, to be
// carried to another server; its Initialize is nil before the client
// initialized.
func (l *Local) Carried() Carried {
	l.record.mu.Lock()
	defer l.record.mu.Unlock()
	c := l.record.carried
	c.SafeTools = maps.Clone(l.record.safe)
	return c
}
