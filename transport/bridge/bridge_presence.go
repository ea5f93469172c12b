package bridge

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A 2026-07-28 client has no session, so nothing of its own tells the
// server it is still there while it is silent, or gone once its process
// ends (docs/design.md#nothing-is-lost: a live agent stays on the board).
// Its bridge holds a presence open for it: a subscriptions/listen of its
// own, in the client's name, asking for (nearly) nothing, for as long as
// the bridge lives. The server keeps the peer attached while it is open and
// lets it go as soon as it ends; and the bridge, like a legacy client's
// stream, learns at once from its end that the server is gone.

// presenceStream is what the bridge's logs call the presence.
const presenceStream = "presence"

// PresenceID is the id of a bridge's presence listen.
const PresenceID = "majordomus-bridge-presence"

// startPresence starts the presence, once, when the client said who it is
// (its first modern message's _meta).
func (b *Bridge) startPresence() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.present && len(b.record.Meta) > 0 {
		b.present = true
		b.goLocked(b.presenceLoop)
	}
}

// presenceLoop holds the presence open, and opens it again when it drops
// on a server that is still there.
func (b *Bridge) presenceLoop() {
	for retry := streamRetryMin; ; {
		opened := b.presence()
		if b.ctx.Err() != nil || !b.attachedNow() || b.leftGone() || b.movesOnLost() || !b.pause(&retry, opened, nil) {
			return
		}
	}
}

// presence holds one presence listen open until it ends, and reports
// whether it opened. What arrives on it is for nobody: the client asked
// for none of it.
func (b *Bridge) presence() (opened bool) {
	b.mu.Lock()
	meta := b.record.Meta
	b.mu.Unlock()
	// An empty filter ends a listen at once: the presence asks for the rarest
	// notification the server sends, prompts/list_changed, and drops it.
	params, _ := json.Marshal(struct {
		Notifications mcp.SubscriptionFilter `json:"notifications"`
		Meta          json.RawMessage        `json:"_meta"`
	}{Notifications: mcp.SubscriptionFilter{PromptsListChanged: true}, Meta: meta})
	_, version := wire.MetaOf(params)
	msg := wire.RequestFrame(PresenceID, string(mcp.MethodSubscriptionsListen), params)
	req, _ := http.NewRequestWithContext(b.ctx, http.MethodPost, b.endpoint, bytes.NewReader(msg)) // New checked the endpoint
	req.Header = postHeader()
	b.setHeaders(req.Header, "", version)
	wire.SetNames(req.Header, string(mcp.MethodSubscriptionsListen), params)
	carry.SetPeer(req.Header, b.modernPeer())
	carry.SetSession(req.Header, b.sessionID())
	opened, _ = b.listen(req, presenceStream, func([]byte) error { return nil }, zap.String("peer", b.PeerID()))
	return opened
}
