package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// sessionRecord is what Local has seen of its client's session.
type sessionRecord struct {
	mu      sync.Mutex
	carried carry.Session
	safe    map[string]bool
}

// note records what one message and its answer say of the session. Only
// the few messages that make a session are decoded — initialize,
// tools/list, the announcement and what the client asks to hear — so that
// every other message costs the comparison of its method, which the
// caller already read.
func (r *sessionRecord) note(ctx context.Context, method string, msg json.RawMessage, answer []byte) {
	switch method {
	case string(mcp.MethodInitialize), string(mcp.MethodToolsList), string(mcp.MethodToolsCall), string(mcp.MethodServerDiscover), string(mcp.MethodResourcesRead):
	default:
		if !carry.HeardMethod(method) {
			return
		}
	}
	params := wire.ParamsOf(msg)
	var call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if method == string(mcp.MethodToolsCall) && (json.Unmarshal(params, &call) != nil || call.Name != carry.AnnounceTool && !carry.TellsGeneration(method, call.Name, nil)) {
		if told := carry.CarriedGeneration(ctx, call.Name, params); told > 0 { // a carried session's, told elsewhere
			r.mu.Lock()
			r.carried.Generation = max(r.carried.Generation, told)
			r.mu.Unlock()
		}
		return
	}
	if method == string(mcp.MethodResourcesRead) && !carry.TellsGeneration(method, "", params) {
		return
	}
	var a wire.Envelope
	if answer == nil || json.Unmarshal(answer, &a) != nil || len(a.Error) > 0 || len(a.Result) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch method {
	case string(mcp.MethodInitialize):
		peer, announced := carry.Opened(answer)
		r.carried = carry.Session{Initialize: bytes.Clone(params), Protocol: carry.ProtocolOf(answer), Peer: peer}
		if announced { // a carried session, opened with its announcement
			r.carried.Announce = bytes.Clone(carry.Announcement(ctx))
		}
	case string(mcp.MethodServerDiscover):
		// A 2026-07-28 client has no initialize: its peer id is the one
		// its server/discover was told, and its _meta says who it is.
		if peer, _ := carry.Opened(answer); peer != "" && r.carried.Initialize == nil {
			r.carried.Peer = peer
			if meta, _ := wire.MetaOf(params); meta != nil {
				r.carried.Meta = bytes.Clone(meta)
			}
		}
	case string(mcp.MethodToolsList):
		if r.safe == nil {
			r.safe = map[string]bool{}
		}
		carry.SafeToResend(r.safe, a.Result)
	case string(mcp.MethodResourcesRead): // the generation told
		r.carried.Generation = max(r.carried.Generation, carry.ToldGeneration(a.Result))
	case string(mcp.MethodToolsCall): // the announcement, or the generation told
		if carry.TellsGeneration(method, call.Name, nil) {
			r.carried.Generation = max(r.carried.Generation, carry.ToldGeneration(a.Result))
		} else if !wire.ToolFailed(a.Result) {
			r.carried.Announce = bytes.Clone(call.Arguments)
			if meta, _ := wire.MetaOf(params); meta != nil && r.carried.Initialize == nil {
				r.carried.Meta = bytes.Clone(meta) // who makes it again, for a 2026-07-28 client
			}
		}
	default: // a subscription, an unsubscription or a logging level granted
		r.carried.Heard.NoteHeard(method, params)
	}
}

// named records meta, the _meta of a 2026-07-28 request, as it arrives
// (as a bridge records it), whatever its method: such a client says who it
// is on every request, and may never announce or discover, nor say it the
// same way twice. Whatever carries its session (its announcement, its
// history, the generation it was told) does so in the name its last
// request gave, which the board shows.
func (r *sessionRecord) named(ctx context.Context, meta json.RawMessage) {
	if carry.Carrying(ctx) || !wire.Taken(meta) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.carried.Initialize == nil {
		r.carried.Meta = bytes.Clone(meta)
	}
}

// Renumbered records that the client's peer id is peer from now on: the
// server numbered it anew as its board became the checkout's.
func (l *Local) Renumbered(peer string) {
	l.record.mu.Lock()
	defer l.record.mu.Unlock()
	l.record.carried.Peer = peer
}

// Carried is the client's session as this local session saw it, to be
// carried to another server; its Initialize is nil before the client
// initialized. An initialize being answered is waited for, however long a
// loaded machine takes: its client is told the session opened, so the
// session carried must be open too.
func (l *Local) Carried() carry.Session {
	l.initializing.Lock()
	defer l.initializing.Unlock()
	l.record.mu.Lock()
	defer l.record.mu.Unlock()
	c := l.record.carried
	c.SafeTools = maps.Clone(l.record.safe)
	c.Heard = c.Heard.Clone()
	return c
}

// earlyMethods are the requests answered the same in every mode: the
// handshake, the lists, the layer's reads and a logging level (carried,
// as it is heard). A process may answer them in process, for the layer it
// indexed, before it knows what serves its client
// (docs/design.md#sharing-heals: starting is never held hostage by the
// lease); every other request needs the board.
var earlyMethods = map[string]bool{
	string(mcp.MethodInitialize):             true,
	string(mcp.MethodServerDiscover):         true, // 2026-07-28's initialize
	string(mcp.MethodPing):                   true,
	string(mcp.MethodToolsList):              true,
	string(mcp.MethodResourcesList):          true,
	string(mcp.MethodResourcesTemplatesList): true,
	string(mcp.MethodPromptsList):            true,
	string(mcp.MethodPromptsGet):             true,
	string(mcp.MethodCompletionComplete):     true, // a prompt argument's declared values
	string(mcp.MethodSetLogLevel):            true,
}

// earlyTools are the tools that read the layer alone, not the board.
var earlyTools = map[string]bool{"majordomus_list": true, "majordomus_get": true, "majordomus_search": true}

// notEarly are the resources that are not the layer's objects: what serves
// the client, and the index's generation, a count of the server's own.
var notEarly = map[string]bool{"majordomus://server": true, "majordomus://repository": true}

// AnsweredEarly reports whether msg may be answered by an in-process
// session before the process knows what serves its client: a request of
// earlyMethods, a call of one of earlyTools, or a notification (it asks
// for no answer, and the session that answered the handshake must hear
// notifications/initialized), which notification reports. A batch is
// not: it may hold anything.
func AnsweredEarly(msg json.RawMessage) (ok, notification bool) {
	env, err := wire.ReadEnvelope(msg)
	if err != nil {
		return false, false
	}
	if env.Method != "" && len(env.ID) == 0 {
		return true, true
	}
	var call struct{ Params struct{ Name, URI string } }
	switch env.Method {
	case string(mcp.MethodToolsCall):
		_ = json.Unmarshal(msg, &call)
		return earlyTools[call.Params.Name], false
	case string(mcp.MethodResourcesRead): // a layer's object
		_ = json.Unmarshal(msg, &call)
		return !notEarly[call.Params.URI], false
	}
	return earlyMethods[env.Method], false
}
