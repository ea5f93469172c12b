package bridge

import (
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
// to the client) as soon as the client's session is ready, and again before
// it relays a call of a tool it knows nothing of if that did not succeed,
// whether or not the client ever lists tools: a server that stops later has
// already told. What it learned travels with the client's session
// (carry.Session.SafeTools) to every bridge after it.

// maxToolPages bounds how many pages of tools/list the bridge reads.
const maxToolPages = 16

// learnToolsFor makes sure the server was asked for its tools before calls
// are relayed when one of them calls a tool the bridge knows nothing of:
// it asks, or waits for the asking under way. A failure leaves the tool
// unknown, hence never resent.
func (b *Bridge) learnToolsFor(ctx context.Context, calls []call) {
	b.mu.Lock()
	unknown := slices.ContainsFunc(calls, func(c call) bool {
		_, known := b.record.SafeTools[c.tool]
		return c.env.Method == string(mcp.MethodToolsCall) && !known
	})
	b.mu.Unlock()
	if unknown {
		b.learnTools(ctx) // or wait for the asking under way
	}
}

// learnTools asks the server for its tools once per bridge (while a
// session is open), and records which are safe to resend.
func (b *Bridge) learnTools(ctx context.Context) {
	b.mu.Lock()
	sid, proto := b.session, b.record.Protocol
	b.mu.Unlock()
	if sid == "" {
		return
	}
	b.toolsMu.Lock()
	defer b.toolsMu.Unlock()
	if b.toolsAsked {
		return // asked already, successfully or not
	}
	b.toolsAsked = true
	cursor := ""
	for range maxToolPages {
		var params json.RawMessage
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		res := b.exchange(ctx, wire.RequestFrame(toolsID, string(mcp.MethodToolsList), params), sid, proto, true)
		if res.outcome != answered || wire.AnswerError(res.body) != nil {
			b.log.Debug("the server's tools could not be listed; calls of unknown tools are not resent", zap.String("url", b.cfg.URL), zap.Error(res.err))
			return
		}
		var page struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(res.body, &page)
		b.mu.Lock()
		cursor = carry.SafeToResend(b.record.SafeTools, page.Result)
		known := len(b.record.SafeTools)
		b.mu.Unlock()
		if cursor == "" {
			b.log.Debug("learned from the server which tools may be resent", zap.String("url", b.cfg.URL), zap.Int("tools", known))
			return
		}
	}
}
