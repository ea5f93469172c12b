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
// the few messages that make a session are decoded: initialize,
// tools/list and the announcement.
func (r *sessionRecord) note(msg json.RawMessage, answer []byte) {
	var m struct {
		Method string `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	switch {
	case answer == nil, json.Unmarshal(msg, &m) != nil:
		return
	case m.Method == string(mcp.MethodInitialize), m.Method == string(mcp.MethodToolsList):
	case m.Method == string(mcp.MethodToolsCall) && m.Params.Name == AnnounceTool:
	default:
		return
	}
	var a struct {
		Result struct {
			ProtocolVersion string         `json:"protocolVersion"`
			Meta            map[string]any `json:"_meta"`
			IsError         bool           `json:"isError"`
			Tools           []struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnly   *bool `json:"readOnlyHint"`
					Idempotent *bool `json:"idempotentHint"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(answer, &a) != nil || len(a.Error) > 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch m.Method {
	case string(mcp.MethodInitialize):
		var params struct {
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(msg, &params)
		peer, _ := a.Result.Meta[PeerMeta].(string)
		r.carried = Carried{Initialize: bytes.Clone(params.Params), Protocol: a.Result.ProtocolVersion, Peer: peer}
	case string(mcp.MethodToolsList):
		if r.safe == nil {
			r.safe = map[string]bool{}
		}
		for _, t := range a.Result.Tools {
			an := t.Annotations
			r.safe[t.Name] = (an.ReadOnly != nil && *an.ReadOnly) || (an.Idempotent != nil && *an.Idempotent)
		}
	default: // the announcement
		if !a.Result.IsError {
			r.carried.Announce = bytes.Clone(m.Params.Arguments)
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
