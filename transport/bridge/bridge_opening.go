package bridge

import (
	"context"
	"encoding/json"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// What a client sends before its session opens, and an initialize sent
// again, are answered as a local session answers them: the server has no
// session for the first, and would keep the one the second leaves.

// reopening ends the session of a client that initializes again, and
// returns ctx claiming its peer id and announcement for the new one, so
// that the board keeps the one peer, renamed, as in process; ctx as it is
// when the client has no session. A session carried back to the server
// it was left on ends the one left there first: its peer holds the id the
// replayed initialize claims until then (leaveLater may be late).
// Until done is called, once the initialize is answered or failed, the
// client's other messages wait for the session it opens (current). An
// initialize the server answered with an error (refused) opens none, and a
// local session refusing it stays as it was: done then opens the ended
// session again, as after a restart.
func (b *Bridge) reopening(ctx context.Context) (_ context.Context, done func(refused bool)) {
	b.mu.Lock()
	sid, proto, peer, announce, stale := b.session, b.record.Protocol, b.record.Peer, b.record.Announce, b.stale
	b.stale = ""
	b.mu.Unlock()
	if sid == "" {
		if stale != "" {
			b.endSession(stale, b.cfg.Carried.Protocol, b.cfg.ProbeTimeout)
		}
		if peer != "" && carry.PeerClaim(ctx) == "" {
			ctx = carry.WithPeerClaim(ctx, peer) // the peer its 2026-07-28 requests were: one client, one peer
		}
		return ctx, func(bool) {}
	}
	reopened := make(chan struct{})
	b.setSession("", "", func() { b.reopened = reopened }) // its stream and heartbeat stop asking for it
	b.endSession(sid, proto, b.cfg.ProbeTimeout)
	return carry.WithAnnouncement(carry.WithPeerClaim(ctx, peer), announce), func(refused bool) {
		if refused {
			if fail := b.reinit(ctx, ""); fail != nil {
				b.log.Warn("the client's session could not be opened again after its initialize was refused", zap.Error(fail.cause))
			}
		}
		b.mu.Lock()
		if b.reopened == reopened { // not a later initialize's
			b.reopened = nil
		}
		b.mu.Unlock()
		close(reopened)
	}
}

// current returns the client's session, once no initialize of the client
// is opening it again: what the client sent before that initialize is
// answered on the session it opens, as a local client's one session,
// initialized again, answers it. A request sent on the session it ended
// is refused 404 there, before it runs, and sent again (relay).
func (b *Bridge) current(ctx context.Context) (sid, proto string, fail *failure) {
	for waited := false; ; waited = true {
		b.mu.Lock()
		sid, proto, reopened, left := b.session, b.record.Protocol, b.reopened, b.left
		b.mu.Unlock()
		switch {
		case waited && left != nil:
			return "", "", &failure{cause: left.Cause, notRun: true}
		case reopened == nil:
			return sid, proto, nil
		}
		if !waited {
			b.log.Debug("a message waits for the session the client's initialize opens again")
		}
		select {
		case <-reopened:
		case <-ctx.Done():
			return "", "", &failure{cause: context.Cause(ctx), notRun: true}
		}
	}
}

// answeredHere answers msg when a local session answers it without its
// MCPServer: a batch no server takes, what screen refuses, and what comes
// before the session opens (the server has none to serve it on), unless
// it is a 2026-07-28 message, which needs none (open: a session serves
// msg, or it needs none). So such an answer never waits on the server,
// and never names it.
func (b *Bridge) answeredHere(msg json.RawMessage, open bool) ([]byte, bool) {
	if refusal := wire.RefusedBatch(msg); refusal != nil {
		return refusal, true
	}
	if answer, ok := screened(msg); ok {
		return answer, true
	}
	if open {
		return nil, false
	}
	return wire.Unopened(msg)
}

// screened answers msg when wire.Screen answers it, or each member of a
// batch when it answers every one; it reports false otherwise.
func screened(msg json.RawMessage) ([]byte, bool) {
	return wire.GatherEach(msg, func(_ int, m json.RawMessage) ([]byte, bool) { return wire.Screen(m) })
}

// An initialize, once sent, is seen through: the session it opens is the
// client's only once its answer is read, and a client that leaves before
// then (a greeted one leaves before its session even opens: greeting.go in
// internal/node) would leave that session on the server's board, its peer
// id held, until the server's idle timeout. So the exchange runs on a
// goroutine of its own that the caller's end does not cut short; the
// session it opens is then ended by Close, or by setSession once the
// bridge is closed or has left (the initialize is then for what serves
// next: the client was handed on without it). Close waits for it, a probe
// timeout at most, so that the process does not end in between.

// seeingThroughKey marks the context of an initialize seen through.
type seeingThroughKey struct{}

// seeThrough reports whether the initialize relayed under ctx is to be
// seen through here: not yet, and the bridge is open (Close waits only for
// what began before it).
func (b *Bridge) seeThrough(ctx context.Context) bool {
	if ctx.Value(seeingThroughKey{}) != nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.opening.Add(1)
	return true
}

// seenThrough relays the initialize msg on its own goroutine (counted by
// seeThrough), and answers the caller when it is answered or ctx ends.
func (b *Bridge) seenThrough(ctx context.Context, msg json.RawMessage, calls []call) ([]byte, *failure) {
	type result struct {
		answer []byte
		fail   *failure
	}
	done := make(chan result, 1)
	go func() {
		defer b.opening.Done()
		answer, fail := b.relay(context.WithValue(context.WithoutCancel(ctx), seeingThroughKey{}, true), msg, calls)
		done <- result{answer, fail}
	}()
	select {
	case r := <-done:
		return r.answer, r.fail
	case <-ctx.Done():
		return nil, &failure{cause: context.Cause(ctx)}
	}
}

// awaitOpening waits, a probe timeout at most, for the initializes being
// seen through (Close).
func (b *Bridge) awaitOpening() {
	done := make(chan struct{})
	go func() {
		b.opening.Wait()
		close(done)
	}()
	t := time.NewTimer(b.cfg.ProbeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// openAgain sends frame, the initialize that opens the client's session
// again (reinit), and returns its result, or false once ctx ends first.
// The exchange goes on, seen through as the client's own initialize is
// (Close waits for it a probe timeout at most), and the session it opens
// is then ended once answered (setSession: ctx ends with the bridge).
func (b *Bridge) openAgain(ctx context.Context, frame []byte) (exchangeResult, bool) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return exchangeResult{}, false
	}
	b.opening.Add(1)
	b.mu.Unlock()
	done := make(chan exchangeResult) // unbuffered: taken, or ended here, never both
	go func() {
		defer b.opening.Done()
		seeing, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.IdleTimeout) // the server's own bound
		defer cancel()
		res := b.exchange(seeing, frame, "", "", true)
		select {
		case done <- res:
		case <-ctx.Done():
			if res.session != "" {
				b.setSession(res.session, carry.ProtocolOf(res.body), nil) // the bridge stopped: ended
			}
		}
	}()
	select {
	case res := <-done:
		return res, true
	case <-ctx.Done():
		return exchangeResult{}, false
	}
}
