package bridge

import (
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Convergence (docs/design.md#server-and-bridge): a server that lost its
// lease goes on serving the sessions it has, and says so on every answer
// (wire.LeaseHeader). A bridge that reads it leaves, so that its client's
// session moves to the current leaseholder — carried, as in a take-over —
// at the first message boundary after that answer, never with a call in
// flight; an idle bridge moves when its heartbeat hears it. After any
// take-over, every bridged client is back on one board within one message
// (or one heartbeat), and the old server drains.

// noteLease records what an answer of the server says of its lease.
func (b *Bridge) noteLease(h http.Header) {
	if h.Get(wire.LeaseHeader) == "lost" && !b.leaseLost.Swap(true) {
		b.log.Info("the shared server no longer holds the checkout's lease; this session moves to the current one at its next message", zap.String("url", b.cfg.URL))
	}
}

// move leaves a server that lost its lease; leaving ends the session
// there in the background (leaveLater): the server may be frozen.
func (b *Bridge) move() *Gone {
	return b.leave(fmt.Errorf("the shared server at %s no longer holds the checkout's lease; moving this session to the current one", b.cfg.URL))
}

// shouldMove says whether the bridge moves before relaying a message: its
// server lost its lease, or the lease names another (Config.Current: one
// frozen when it was taken over cannot say so), and no call of this bridge
// is in flight there.
func (b *Bridge) shouldMove() bool {
	if b.inflight.Load() != 0 {
		return false
	}
	if !b.leaseLost.Load() && b.cfg.Current != nil && !b.cfg.Current() && !b.leaseLost.Swap(true) {
		b.log.Info("the lease names another server now; this session moves to it at its next message", zap.String("url", b.cfg.URL))
	}
	return b.leaseLost.Load()
}
