package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// reinit opens a new session on the client's behalf after the server forgot
// stale: the client's initialize (private id, answer dropped),
// notifications/initialized, then its announcement. Nothing is done when
// another caller already replaced stale.
func (b *Bridge) reinit(ctx context.Context, stale string) *failure {
	b.reinitMu.Lock()
	defer b.reinitMu.Unlock()
	// What it sends is sent whoever asked stops waiting, and ends with the
	// bridge: Close waits for it. The initialize itself goes on (openAgain).
	ctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	defer context.AfterFunc(b.ctx, stop)()
	b.mu.Lock()
	current, params, announce, peer, heard := b.session, b.record.Initialize, b.record.Announce, b.record.Peer, b.record.Heard.Clone()
	announceSafe := b.record.SafeTools[carry.AnnounceTool]
	b.mu.Unlock()
	if current != stale {
		return nil
	}
	// the restarted server's board knows the client as before, with its announcement
	opening := carry.WithAnnouncement(carry.WithPeerClaim(ctx, peer), announce)
	if !b.attachedNow() {
		return &failure{cause: errors.New("the bridge is no longer attached"), notRun: true}
	}
	if params == nil {
		return &failure{cause: fmt.Errorf("the shared server at %s does not know the session and the client never initialized", b.cfg.URL), notRun: true}
	}
	res, ok := b.openAgain(opening, wire.RequestFrame(carry.ReinitializeID, "initialize", params))
	switch {
	case !ok:
		return &failure{cause: errors.New("the bridge stopped while the session was opened again"), notRun: true}
	case res.outcome == failed:
		return &failure{cause: b.unreachable(res.err), notRun: true}
	case res.outcome == answered && wire.LeaseLostAnswer(res.body, wire.CodeLeaseLost):
		return &failure{cause: fmt.Errorf("the shared server at %s refused a new session: %v", b.cfg.URL, wire.AnswerError(res.body)), notRun: true}
	case res.outcome != answered || res.session == "" || wire.AnswerError(res.body) != nil:
		return &failure{cause: fmt.Errorf("the shared server at %s lost the session and did not open a new one (status %d): %s",
			b.cfg.URL, res.status, strings.TrimSpace(string(res.body))), notRun: true}
	}
	proto := carry.ProtocolOf(res.body)
	peer, announced := carry.Opened(res.body)
	if !b.setSession(res.session, proto, func() { b.record.Peer = peer }) {
		return &failure{cause: errors.New("the bridge stopped relaying while the session was opened again"), notRun: true}
	}
	if res := b.exchange(ctx, carry.InitializedFrame, res.session, proto, true); res.outcome != answered {
		return &failure{cause: fmt.Errorf("the shared server at %s is unreachable: %v", b.cfg.URL, res.err), notRun: true}
	}
	b.log.Info("session re-opened on the shared server", zap.String("url", b.cfg.URL), zap.String("session", res.session))
	if announce != nil && !announced {
		res := b.exchange(carry.WithCarrying(ctx), carry.AnnounceFrame(announce), res.session, proto, announceSafe)
		if res.outcome == answered && wire.AnswerError(res.body) == nil {
			b.log.Info("the client's announcement was replayed to the server it is now attached to")
		} else {
			b.log.Warn("the client's announcement could not be replayed; the board understates it until it announces again")
		}
	}
	for _, frame := range heard.ReplayFrames() { // a carried session's: a subscription to what is gone now is kept
		if res := b.exchange(carry.WithCarrying(ctx), frame, res.session, proto, true); res.outcome != answered || wire.AnswerError(res.body) != nil {
			b.log.Warn("what the client asked to hear could not be asked again; it may miss notifications until it asks itself", zap.ByteString("request", frame))
		}
	}
	return nil
}

// initialized records the client's session once its initialize
// succeeded. It reports false when the session is not the client's: the
// bridge stopped relaying meanwhile (setSession), and the initialize is
// for what serves next.
func (b *Bridge) initialized(ctx context.Context, c call, res exchangeResult) bool {
	if wire.AnswerError(res.body) != nil || res.session == "" {
		return true
	}
	var p struct {
		ClientInfo struct{ Name, Version string } `json:"clientInfo"`
	}
	_ = json.Unmarshal(c.params, &p)
	peer, announced := carry.Opened(res.body)
	kept := b.setSession(res.session, carry.ProtocolOf(res.body), func() {
		b.record.Initialize, b.record.Announce, b.ready, b.record.Heard = bytes.Clone(c.params), nil, false, carry.Hearing{}
		if announced { // a carried session, opened with its announcement
			b.record.Announce = bytes.Clone(carry.Announcement(ctx))
		}
		b.record.Peer = peer
	})
	if kept {
		b.log.Info("the client's session opened on the shared server", zap.String("url", b.cfg.URL), zap.String("session", res.session),
			zap.String("client", p.ClientInfo.Name), zap.String("client_version", p.ClientInfo.Version))
		b.startPresence() // a carried session's, once it names the session (New)
	}
	return kept
}

// setSession switches to session sid, with what note (run under b.mu, nil
// for nothing) records of it; the old one's stream ends. A session opened
// once the bridge was closed or had left is not the client's: Close ended
// the one before it, and leaving handed the client on without it, so
// nothing else knows it to end it. It is ended at once (on a server left,
// once that answers: leaveLater), and setSession reports false.
func (b *Bridge) setSession(sid, proto string, note func()) bool {
	b.mu.Lock()
	if sid != "" && (b.closed || b.left != nil) {
		closed := b.closed
		b.mu.Unlock()
		if closed {
			b.endSession(sid, proto, closingWait)
		} else {
			b.leaveLater(sid, proto)
		}
		return false
	}
	if note != nil {
		note()
	}
	if sid != b.session && b.streamStop != nil {
		b.streamStop()
		b.streamStop = nil
	}
	b.session, b.record.Protocol = sid, proto
	b.mu.Unlock()
	poke(b.wake)
	return true
}

// poke wakes whoever waits on ch (Bridge.wake, Bridge.silent), unless a
// wake waits there already.
func poke(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
