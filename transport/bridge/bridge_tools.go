package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Resend safety comes from the server (docs/design.md#server-and-bridge):
// which tools are harmless to run twice is in their annotations, which the
// bridge asks the server for itself (tools/list, id toolsID, never answered
// to the client) as soon as the client's session is ready, or before it
// relays a call of a tool it knows nothing of (a 2026-07-28 client has no
// session: the bridge asks in its name then), whether or not the client
// ever lists tools: a server that stops later has already told. What it
// learned travels with the client's session (carry.Session.SafeTools) to
// every bridge after it.

// maxToolPages bounds how many pages of tools/list the bridge reads.
const maxToolPages = 16

// learnToolsFor makes sure the server was asked for its tools before calls
// are relayed when one of them calls a tool the bridge knows nothing of:
// it asks, or waits for the asking under way. A failure leaves the tool
// unknown, hence never resent; a server that failed the asking is left
// (the calls were not sent), so that it costs them no second wait.
func (b *Bridge) learnToolsFor(ctx context.Context, calls []call) *failure {
	b.mu.Lock()
	i := slices.IndexFunc(calls, func(c call) bool {
		_, known := b.record.SafeTools[c.tool]
		return c.env.Method == string(mcp.MethodToolsCall) && !known
	})
	b.mu.Unlock()
	if i < 0 {
		return nil
	}
	var meta json.RawMessage
	if mcp.IsModernProtocol(calls[i].version) {
		meta = calls[i].meta
	}
	return b.learnTools(ctx, meta) // or wait for the asking under way
}

// learnTools asks the server for its tools once per bridge, in the
// client's session, or in its name (meta, the _meta of its 2026-07-28
// request) when it has none, and records which are safe to resend. It
// returns how the server failed a 2026-07-28 asking, if it did.
func (b *Bridge) learnTools(ctx context.Context, meta json.RawMessage) *failure {
	b.mu.Lock()
	sid, proto := b.session, b.record.Protocol
	b.mu.Unlock()
	if sid == "" && meta == nil {
		return nil
	}
	b.toolsMu.Lock()
	defer b.toolsMu.Unlock()
	if b.toolsAsked {
		if f := b.toolsFail; f != nil && meta != nil {
			return &failure{cause: f.cause, notRun: true} // the server that failed it is left
		}
		return nil // asked already, successfully or not
	}
	b.toolsAsked = true
	cursor := ""
	for range maxToolPages {
		p := map[string]any{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		if sid == "" {
			p["_meta"] = meta
		}
		var params json.RawMessage
		if len(p) > 0 {
			params, _ = json.Marshal(p)
		}
		answer, fail, err := b.askTools(ctx, wire.RequestFrame(toolsID, string(mcp.MethodToolsList), params), sid, proto)
		if fail != nil || err != nil {
			if fail != nil {
				err = fail.cause
			}
			b.log.Debug("the server's tools could not be listed; calls of unknown tools are not resent", zap.String("url", b.cfg.URL), zap.Error(err))
			if ctx.Err() == nil { // not the asker's own cancellation
				b.toolsFail = fail
			}
			return fail
		}
		var page struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(answer, &page)
		b.mu.Lock()
		cursor = carry.SafeToResend(b.record.SafeTools, page.Result)
		known := len(b.record.SafeTools)
		b.mu.Unlock()
		if cursor == "" {
			b.log.Debug("learned from the server which tools may be resent", zap.String("url", b.cfg.URL), zap.Int("tools", known))
			return nil
		}
	}
	return nil
}

// askTools is the server's answer to msg, the bridge's own tools/list,
// asked in the session sid, or as a 2026-07-28 request when there is none
// (and then how the server failed it, if it did); else why there is none.
func (b *Bridge) askTools(ctx context.Context, msg json.RawMessage, sid, proto string) ([]byte, *failure, error) {
	if sid == "" {
		answer, fail := b.exchangeModern(ctx, msg, readCalls(msg)[0])
		if fail != nil {
			return nil, fail, nil
		}
		return answer, nil, wire.AnswerError(answer)
	}
	res := b.exchange(ctx, msg, sid, proto, true)
	if res.outcome != answered {
		return nil, nil, cmp.Or(res.err, wire.AnswerError(nil))
	}
	return res.body, nil, wire.AnswerError(res.body)
}

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

// resendable reports whether every message of calls may be sent twice.
func (b *Bridge) resendable(calls []call) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range calls {
		if !mayRepeat(c, b.record.SafeTools) {
			return false
		}
	}
	return true
}

// mayRepeat reports whether running c twice is harmless: any method but
// tools/call, and tools whose hints say read-only or idempotent (safe).
func mayRepeat(c call, safe map[string]bool) bool {
	return c.env.Method != string(mcp.MethodToolsCall) || safe[c.tool]
}
