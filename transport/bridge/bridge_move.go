package bridge

import (
	"fmt"
	"math"
	"net/http"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Convergence (docs/design.md#server-and-bridge): a server that lost its
// lease goes on serving the sessions it has, and says so on every answer
// (wire.LeaseHeader). A bridge that reads it leaves, so that its client's
// session moves to the current leaseholder — carried, as in a take-over — at
// the first message boundary after that answer, never with a call in flight.
// An idle bridge moves at once: the old server ends its stream (or a
// 2026-07-28 client's presence), whose end is a boundary too (movesOnLost);
// failing that (a server frozen as it was taken over ends nothing), when its
// heartbeat hears it (for a 2026-07-28 client, when a beat finds the lease
// naming another). A tool call the server refuses as it lost its lease (409
// lease_lost: its history is no longer the checkout's) waits for the calls
// still in flight there, and goes with the move. After any take-over, every
// bridged client is back on one board within one message (or one heartbeat),
// and the old server drains.

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

// movesOnLost is asked at each heartbeat, and when the session's stream or
// presence ended (a server that lost its lease ends them): when the server's
// lease is gone and no call of this bridge is in flight, the bridge moves
// now, and it reports whether it did. One with a call in flight opens its
// stream (or presence) again and holds it until that call ends, whose
// boundary moves it: the call may ask its client something on the stream,
// and the presence keeps the server serving the call.
func (b *Bridge) movesOnLost() bool {
	if !b.drained() {
		return false
	}
	b.move()
	return true
}

// movedOff is the count of messages in flight once the bridge decided to
// move: none is counted in after it.
const movedOff = math.MinInt32

// enter counts a message in (counted: one a move waits for), or reports
// that the bridge moves instead: its server's lease is gone and no call of
// this bridge is in flight there. One step decides and counts, so that no
// message is sent once the bridge decided to leave, however long it
// waited before (for the tools, say).
func (b *Bridge) enter(counted bool) (move bool) {
	for {
		n := b.inflight.Load()
		switch {
		case n < 0:
			return true
		case n == 0 && b.leaseGone():
			if b.inflight.CompareAndSwap(0, movedOff) {
				return true
			}
		case !counted:
			return false
		case b.inflight.CompareAndSwap(n, n+1):
			return false
		}
	}
}

// drained reports whether the bridge moves now, between messages: its
// server's lease is gone and no call of this bridge is in flight there.
func (b *Bridge) drained() bool {
	return b.inflight.Load() == 0 && b.leaseGone() && b.inflight.CompareAndSwap(0, movedOff)
}

// refusedAsLost records that the server refused a message as it lost its
// lease, and reports whether the bridge moves now: no call of its is in
// flight there.
func (b *Bridge) refusedAsLost() bool {
	if !b.leaseLost.Swap(true) {
		b.log.Info("the shared server refused a message, as it no longer holds the checkout's lease; this session moves to the current one once its calls there ended", zap.String("url", b.cfg.URL))
	}
	return b.drained()
}

// leaseGone says whether the server lost its lease, as its answers say,
// or the lease names another (Config.Current: one frozen when it was taken
// over cannot say so).
func (b *Bridge) leaseGone() bool {
	if !b.leaseLost.Load() && b.cfg.Current != nil && !b.cfg.Current() && !b.leaseLost.Swap(true) {
		b.log.Info("the lease names another server now; this session moves to it at its next message", zap.String("url", b.cfg.URL))
	}
	return b.leaseLost.Load()
}
