package node

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"runtime/debug"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// The client session's carrying: when what serves the client changes (its
// bridge left, the process's server lost its lease, a greeting opened its
// session), the session as the client saw it is kept, to be replayed onto
// what serves next (adopt, in client.go), and what served it is retired.

// settleBound bounds how long carrying the in-process session waits for
// the messages it is answering: a long-lived one (a 2026-07-28 listen
// stream) must not hold the client back.
const settleBound = time.Second

// lost hears that b left its server, saying g: when b served the client,
// g's session is the one to carry, and the machine elects again; the
// client's messages wait meanwhile. b is closed either way.
func (s *clientSession) lost(b wire.Backend, g *bridge.Gone) {
	s.mu.Lock()
	news := s.router.holdFrom(b)
	if news {
		carried := g.Session
		s.carried, s.causes, s.interim = &carried, []string{g.Error()}, false
	}
	s.mu.Unlock()
	if news {
		s.elections.BridgeFailedWith(s.failure(g.Error(), g))
	}
	s.router.retire(b)
}

// failure is what the machine hears of a bridge that failed for cause:
// reason, unless the server was full, which then says so itself, or
// silent, for how long; and whether the client is still served alone (the
// bridge never took it over).
func (s *clientSession) failure(reason string, cause error) machine.BridgeFailure {
	f := machine.BridgeFailure{Reason: reason, Alone: s.alone.Load() != nil}
	var full *bridge.FullServer
	if errors.As(cause, &full) {
		f.Reason, f.URL, f.Full, f.RetryAfter = full.Error(), full.URL, true, full.RetryAfter
	}
	var silent *bridge.SilentServer
	if errors.As(cause, &silent) {
		f.URL, f.Silent = silent.URL, silent.After
	}
	return f
}

// carryLocal makes the in-process session, if any, the one to carry onto
// a bridge: the client's messages wait from now on, those it is answering
// are let finish, and what it has seen of the session is carried, with
// what earlier bridges learned of the tools (the calls it answered that no
// shared history kept go too: adopt). It returns what is carried, if
// anything.
func (s *clientSession) carryLocal(ctx context.Context) (c carry.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interim = false
	if s.local == nil {
		if s.carried != nil {
			c = *s.carried
		}
		return c
	}
	c = s.settled(ctx)
	if srv, err := s.n.load(); err == nil {
		board := srv.surface.Board
		if id := board.PeerID(localSession); id != "" && id != c.Peer && board.Counted(id) {
			c.Peer = id // the checkout's, given where the session was taken in only in part (given)
		} else if !board.Counted(c.Peer) {
			c.Peer = "" // numbered apart from the checkout's counter: the shared server numbers it
		}
	}
	if s.carried != nil && len(s.carried.SafeTools) > 0 {
		safe := maps.Clone(s.carried.SafeTools)
		maps.Copy(safe, c.SafeTools)
		c.SafeTools = safe
	}
	s.carried = &c
	return c
}

// settled holds the client's messages and is the in-process session as it
// saw them once those it answers are answered (mu held, local open), under
// the peer id the session has on the board.
func (s *clientSession) settled(ctx context.Context) carry.Session {
	s.router.hold()
	settle, cancel := context.WithTimeout(ctx, settleBound)
	defer cancel()
	s.router.settle(settle, s.local)
	c := s.local.Carried()
	if c.Peer == "" {
		// a 2026-07-28 client that never sent server/discover was told no
		// id, yet is its session's peer: it keeps that id where it goes
		if srv, err := s.n.load(); err == nil {
			c.Peer = srv.surface.Board.PeerID(localSession)
		}
	}
	return c
}

// lateGiver has each call an in-process session carried onto the bridge
// b is about to serve was still answering (settled waits a bounded time:
// served alone, or a hand-over) given to the shared server through what
// serves the client, as it is recorded, before its answer goes, as the
// carrying gave the others; one recorded before adopted is closed (the
// adoption ended: b serves, or it failed) waits for it, so that no call
// the client makes on its answer goes first. It returns what gives those
// recorded meanwhile, or nil when this process never answered in process.
// What cannot be given waits for the next carrying (c: the session
// carried, nil for none).
func (s *clientSession) lateGiver(c *carry.Session, adopted <-chan struct{}) (give func()) {
	history := s.n.co.unshared()
	if history == nil {
		return nil
	}
	var meta json.RawMessage
	if c != nil {
		meta = c.Meta
	}
	give = func() {
		<-adopted
		b, ok := s.router.currentBackend().(*bridge.Bridge)
		if !ok {
			return
		}
		raw, mark := history.Unshared()
		if raw == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), settleBound)
		defer cancel()
		if carry.GiveHistory(ctx, b, meta, raw) == nil {
			history.Shared(mark)
		}
	}
	history.Away(give)
	return give
}

// carryGreeting makes the session a greeting opened for hello, claiming
// peer on the server instance by, the one carried, when nothing answered,
// chose or carried the client's session yet, and reports whether it did.
func (s *clientSession) carryGreeting(hello surface.Handshake, peer, by string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.interim || s.local != nil {
		return false
	}
	s.carried = &carry.Session{Initialize: hello.Params, Protocol: hello.Protocol(), Peer: peer}
	s.greetedBy, s.interim = by, false
	return true
}

// handOver keeps the in-process session, as it saw it, to carry onto
// whatever the election gives next, and closes it: the shared server this
// process ran lost its lease. The client's messages wait meanwhile. A
// client being seated (Start's adopt) is seated whole first.
func (s *clientSession) handOver(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local != nil {
		c := s.settled(ctx)
		s.carried, s.causes, s.interim = &c, []string{"the shared server this process ran lost its lease"}, false
		// the client is told the lease was lost (LoseLease) before its
		// session closes
		flush, cancel := context.WithTimeout(ctx, settleBound)
		s.local.Flush(flush)
		cancel()
	}
	s.router.hold()
	s.dropLocal()
}

// given makes the id the shared server bridge b gave the client the
// in-process session's, when the session was carried there, or carrying
// it failed part way (the server died as it took the session in, say):
// what it kept of the session, journaled for the next server, is under
// that id, which the session keeps from now on (mu held).
func (s *clientSession) given(b wire.Backend) {
	bridged, ok := b.(*bridge.Bridge)
	if !ok || s.local == nil || bridged.PeerID() == "" {
		return
	}
	if srv, err := s.n.load(); err == nil {
		srv.surface.Given(localSession, bridged.PeerID())
	}
}

// closeLocal ends the in-process session, if any: it leaves the board.
func (s *clientSession) closeLocal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocal()
}

// settleLocal holds the client's messages and lets those the in-process
// session answers finish (within settleBound): the server is stopping,
// and a call it answers is recorded while its session is on the board
// and its state is still kept.
func (s *clientSession) settleLocal(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local != nil {
		s.settled(ctx)
	}
}

// dropLocal is closeLocal, mu held.
func (s *clientSession) dropLocal() {
	if s.local != nil {
		s.router.retire(s.local)
		s.local = nil
	}
}

// retire ends bridge b's session once the attachment no longer uses it:
// when it serves the client, messages wait from now on for what serves
// next. Stop the adoption of b first, or this waits for it.
func (s *clientSession) retire(b *bridge.Bridge) {
	s.mu.Lock()
	s.router.holdFrom(b) // before its adoption commits, or after: never between
	s.mu.Unlock()
	s.router.retire(b)
}

// end ends what serves the client now: the client has left. It does not
// wait for a session being carried, which its attachment's end stops.
func (s *clientSession) end() { s.router.retire(s.router.currentBackend()) }

// told says what adopt changed (mu held), once b serves the client (a
// message sent on hearing it meets b): in the log, and to a client whose
// session was carried from a server that is gone or was served alone, or
// is carried to be served alone; a greeted one's was not, when its
// greeting's server seats it.
func (s *clientSession) told(h how, b wire.Backend, c *carry.Session, srv *served, greeted bool) {
	log, url := s.n.log, zap.String("url", h.url)
	switch {
	case h.as == machine.Leaseholder && c != nil:
		log.Info("took over as the shared server; this session continues locally", url)
		tell(srv, "majordomus: the shared server this session used is gone; this process took over as the checkout's shared server at "+h.url)
		s.relisted(c)
	case h.as == machine.Alone && c != nil:
		s.warn(c, "majordomus: "+surface.AloneNotice(h.why))
		s.relisted(c)
	case h.as != machine.Attached:
	case s.local != nil: // answered in process (alone, or while electing): carried onto the bridge
		peer, was := b.(*bridge.Bridge).PeerID(), s.local.Carried().Peer
		wasAlone := s.alone.Swap(nil) != nil
		// under the id it joined as: a call it answers still, or a later
		// term here, never names the one it was numbered alone
		s.given(b)
		s.dropLocal() // it leaves this process's own board, which nobody else sees
		if wasAlone {
			s.joined(h, c, was, peer, nil)
			if c != nil {
				s.relisted(c) // it moved to another server, as a take-over moves one
			}
		} else {
			log.Info("bridging this stdio session, answered in process while electing, to the shared server at "+h.url, url, zap.String("peer", peer))
		}
	case c != nil && !greeted && h.server != "" && h.server == s.bridgedTo:
		// its bridge gave up on a server that was only slow, and the
		// election found it serving still: nothing moved
		log.Info("re-attached to the shared server", url)
		s.relisted(c)
	case c != nil && !greeted:
		s.moved(h, c)
		log.Info("re-attached to the shared server", url) // once it is told
		s.relisted(c)
	default:
		log.Info("a shared server for this checkout is already running at "+h.url+"; bridging this stdio session to it", url)
	}
}

// early is the interim session: the client's in-process session, opened
// on this process's surface, answering what is the same in every mode
// while the election runs (docs/design.md#sharing-heals: starting is never
// held hostage by the lease). It is nil once early answers are no longer
// allowed, once this process leads (its handshake names its server's URL,
// which binding gives soon), or when the layer cannot be loaded (the
// election's end says why). Whatever serves next takes the session over: the leaseholder and
// alone keep it, attaching carries it.
func (s *clientSession) early() wire.Backend {
	s.mu.Lock()
	allowed := s.interim
	s.mu.Unlock()
	if !allowed || isLeaseholder(s.n.State()) {
		return nil
	}
	debug.FreeOSMemory() // the election is slow: before indexing, give back what package init left (B6)
	srv, err := s.n.load()
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.interim {
		return nil
	}
	if s.local == nil {
		if s.open(srv) != nil {
			return nil
		}
		s.n.log.Info("answering this client's handshake and the layer's lists and reads in process while the election runs; what needs the board waits for it",
			zap.String("lease", s.n.lease.Path()))
	}
	return s.local
}
