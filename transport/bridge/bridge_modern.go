package bridge

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A client of protocol revision 2026-07-28 ("modern") has no session: each
// request carries its revision, capabilities and identity in _meta, over HTTP
// in headers too. The bridge relays such a request as it came, on no session,
// with the headers that revision requires (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name) and the client's peer id in a header of ours (carry.SetPeer), so
// that the server knows every request of one stdio client as one peer. The
// answer, whatever its HTTP status, is the server's JSON-RPC answer and goes
// to the client as it is: a host gets the same bytes attached as served in
// process (R8).

// relayModern relays one modern message (batches are not part of that
// revision) and returns its answer, or why there is none. A request the
// client cancels meanwhile ends ctx (Relay), which closes its stream. A
// subscriptions/listen lasts as long as its client wants, so it is not left
// behind when the bridge leaves (a move waits for no listen, as it waits for
// every other request): it ends there, and what serves next opens it again
// (Gone.Resend).
func (b *Bridge) relayModern(ctx context.Context, msg json.RawMessage, c call) ([]byte, *failure) {
	if !c.env.IsRequest() {
		return b.exchangeModern(ctx, msg, c)
	}
	if c.env.Method == string(mcp.MethodSubscriptionsListen) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(b.ctx, cancel)()
	}
	return b.exchangeModern(ctx, msg, c)
}

// exchangeModern POSTs one modern message, on no session, and reads what
// its answer means.
func (b *Bridge) exchangeModern(ctx context.Context, msg json.RawMessage, c call) ([]byte, *failure) {
	// One any server refuses would keep it from being carried; what carries
	// a session names it by the carried meta, which the record starts from
	// (and a history's bears the history).
	if wire.Taken(c.meta) && !carry.Carrying(ctx) {
		b.mu.Lock()
		b.record.Meta = c.meta // how the client says who it is, for its announcement made again
		b.mu.Unlock()
	}
	b.startPresence()
	header := postHeader()
	b.setHeaders(header, "", c.version)
	if c.env.Method != "" {
		wire.SetNames(header, c.env.Method, c.params)
	}
	carry.SetPeer(header, b.modernPeer())
	carry.SetSession(header, b.sessionID())
	res := b.post(ctx, msg, header, b.resendable([]call{c}))
	switch {
	case res.outcome == failed && len(res.body) == 0:
		return nil, &failure{cause: b.unreachable(res.err), notRun: res.notRun}
	case wire.LeaseLostAnswer(res.body, wire.CodeLeaseLostModern):
		return nil, &failure{cause: fmt.Errorf("the shared server at %s refused the request: %v", b.cfg.URL, wire.AnswerError(res.body)), notRun: true}
	case !c.env.IsRequest():
		return nil, nil
	case wire.IsAnswer(res.body):
		b.observe([]call{c}, res.body)
		return res.body, nil
	}
	b.log.Warn("the shared server refused a request", zap.String("url", b.cfg.URL), zap.Int("status", res.status), zap.String("method", c.env.Method))
	return wire.ErrorFrame(c.env.ID, mcp.INTERNAL_ERROR, "the shared server refused the request: "+wire.HTTPErrorText(res.body)), nil
}

// modernPeer is the client's peer id for a modern message: the one its
// session or an earlier bridge had, else one drawn from cfg.NewPeer the
// first time a modern message needs it (and carried over a failover after
// that).
func (b *Bridge) modernPeer() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.record.Peer == "" && b.cfg.NewPeer != nil {
		b.record.Peer = b.cfg.NewPeer()
	}
	return b.record.Peer
}

// sessionID is the session the client opened with initialize, "" for none.
func (b *Bridge) sessionID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session
}
