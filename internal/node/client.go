package node

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// clientSession is this process's stdio client's session, and its one
// owner (doc.go states its model): the stdio loop's backend, and the only
// code that reads or writes what serves the client. Its verbs change its
// state under mu, held inside them only; the router it sets and retires
// keeps the read path.
type clientSession struct {
	n         *Node
	router    *router
	elections electing
	// patience is how long a request that may be answered early waits for
	// the election before the in-process session answers it.
	patience time.Duration

	mu        sync.Mutex
	local     *stdio.Local           // the in-process session (leaseholder, alone, or while electing), or nil
	carried   *carry.Session         // what the next backend is given, once a backend was left
	causes    []string               // why the last backend was left
	served    bool                   // a backend has served the client
	interim   bool                   // early answers are allowed: nothing was chosen, served or carried yet
	greetedBy string                 // the instance of the server whose greeting opened the session carried, until an adoption seats it
	bridgedTo string                 // the instance of the server the last bridge that served the client was attached to, if any
	alone     atomic.Pointer[string] // why the client is served alone; read without mu (describe)
	greeting  greeting               // of the client's first initialize, when it may be (greeting.go)
	// listening are the client's listens under way, wherever they are;
	// listened, each one's request, by its id: what it asked to hear is
	// told again when its session moves (relisted).
	listening wire.Cancels
	listened  sync.Map
	// unsent are the client's requests waiting for something to serve
	// them: one cancelled meanwhile is sent nowhere, and answered nothing.
	unsent wire.Cancels
	// relayed are its requests being served: one cancelled meanwhile is
	// not sent again when the backend's bridge left its server, and, of
	// 2026-07-28, answered nothing, though what answered it never heard
	// the cancel (it waited behind a hand-over, or came before the request).
	relayed wire.Cancels
	notices notices // what it is told of what changed, written in order off its mutex (notices.go)
}

// electing is what hears that the bridge serving the client left its
// server: the machine, which elects again.
type electing interface{ BridgeFailedWith(machine.BridgeFailure) }

// how says what the machine chose to serve the client.
type how struct {
	as     machine.State // leaseholder, attached or alone
	url    string        // the shared server's: the one this process runs, or the bridge's
	server string        // attached: the instance of the bridge's server
	why    string        // alone: why sharing failed
}

// localSession is the id of the in-process session of this process's
// stdio client. It is drawn, not fixed: a 2026-07-28 request names the
// session its client opened too (carry.SessionOf), and one naming a
// known id would speak, and announce, as the leaseholder's own client.
var localSession = "stdio-" + rand.Text()

// earlyPatience is how long an early request waits for the election: an
// attaching process's ends within milliseconds, and never loads the index
// for the in-process session; no owner that binds, is busy, frozen or full
// holds a host's start-up back longer.
const earlyPatience = 50 * time.Millisecond

func newClientSession(n *Node, elections electing, patience time.Duration) *clientSession {
	return &clientSession{n: n, router: newRouter(), elections: elections, patience: patience, interim: true}
}

// Handle gives msg to what serves the client, waiting for it if need be.
// A message that met a bridge leaving its server is answered from what
// serves next. A listen the client cancels is answered nothing, wherever
// it is: a hand-over moves it on (stdio.ErrMoved), and its cancel may
// reach what serves next before it does. So is any 2026-07-28 request it
// cancels: its cancel may wait behind a hand-over, or pass it.
func (s *clientSession) Handle(ctx context.Context, msg json.RawMessage) []byte {
	s.n.drawing.Do(s.n.drawSoon)
	if answer, ok := s.beforeOpening(msg); ok {
		return answer
	}
	if s.greeting.absorbs(msg) {
		return nil
	}
	switch {
	case wire.IsMethod(msg, mcp.MethodNotificationCancelled):
		params := wire.ParamsOf(msg)
		unsent := s.unsent.Cancel(params)
		s.listening.Cancel(params) // and on: what serves has the listen too
		s.relayed.Cancel(params)   // and on: what serves is told
		if unsent {
			return nil // nothing has the request: nothing is told
		}
	case listens(msg):
		env, _ := wire.ReadEnvelope(msg)
		listen, end := s.listening.Begin(ctx, env.ID)
		listened := &msg // once, when a bridge gone gives it here again; its own, when its id is reused
		s.listened.Store(string(env.ID), listened)
		defer s.listened.CompareAndDelete(string(env.ID), listened)
		if answer := s.serve(listen, msg); !end() {
			return answer
		}
		return nil
	}
	return s.serve(ctx, msg)
}

// listensUnderWay are the requests of the client's listens under way.
func (s *clientSession) listensUnderWay() (msgs []json.RawMessage) {
	s.listened.Range(func(_, v any) bool {
		msgs = append(msgs, *v.(*json.RawMessage))
		return true
	})
	return msgs
}

// serve is Handle's answer to msg.
func (s *clientSession) serve(ctx context.Context, msg json.RawMessage) []byte {
	answer, patience := s.greeting.greeted(s, msg)
	if answer != nil {
		return answer
	}
	relayed := func() bool { return false }
	env, readErr := wire.ReadEnvelope(msg) // a batch is resent whole
	if readErr == nil && env.IsRequest() {
		_, relayed = s.relayed.Begin(ctx, env.ID) // before anything has it: its cancel may come first
		defer relayed()
	}
	var b wire.Backend
	for {
		waiting, sent := s.waiting(ctx, msg)
		var err error
		b, err = s.router.claim(waiting, msg, patience)
		if errors.Is(err, errPatient) {
			s.router.offer(s.early())
			b, err = s.router.await(waiting, msg, true, nil)
		}
		if cancelled := sent(); cancelled {
			if err == nil && !listens(msg) { // a listen keeps nothing busy (await)
				s.router.release(b)
			}
			return nil // cancelled by its client before anything had it
		}
		if err != nil {
			return wire.Unavailable(msg, err)
		}
		if !s.unheld(b, msg) {
			break
		}
		patience = s.patience // what the hand-over gives next answers it
	}
	ctx = naming(ctx, msg) // the history keeps it once, however often it is sent
	answer, err := s.router.relay(s.hostClaim(ctx, b), b, msg)
	var g *bridge.Gone
	gone, moved := errors.As(err, &g), errors.Is(err, stdio.ErrMoved)
	again, resent := relayed, ctx
	if (gone || moved) && readErr == nil && env.IsRequest() {
		// its cancel is heard until what serves next has it (its Begin
		// takes the id over): there, it would find nothing to cancel
		resent, again = s.relayed.Begin(ctx, env.ID)
		defer again()
	}
	cancelled := relayed()
	if gone {
		s.lost(b, g) // it retires b
	}
	// one cancelled since, as the hand-over began, is not sent again either
	cancelled = cancelled || resent.Err() != nil && ctx.Err() == nil
	switch {
	case (g != nil || moved) && cancelled:
		s.n.log.Debug("a request left unanswered where it was sent is not sent again: its client cancelled it", zap.String("method", env.Method))
		return nil
	case g != nil:
		answer = g.Resend(ctx, s, msg)
	case moved:
		answer = s.serve(ctx, msg)
	}
	if again() && modernRequest(msg) {
		// what answered it never heard the cancel: it waited behind a
		// hand-over, reached what serves next, or came as it was sent there
		return nil
	}
	return answer
}

// unheld reports whether b, claimed for msg, is an in-process session
// that must not answer it: the session of a server that lost its lease
// unheard (a leaseholder stopped while it was taken over, its client's
// messages queued), or one a hand-over retired since it was claimed. The
// lease is asked as the server asks it for every HTTP request; on a loss
// the machine is told, and its hand-over carries the session on. The
// message then waits for what serves next: no answer comes from a board
// that is not the checkout's. The interim session answers on: what it
// answers is the same in every mode.
func (s *clientSession) unheld(b wire.Backend, msg json.RawMessage) bool {
	if _, local := b.(*stdio.Local); !local {
		return false
	}
	st := s.n.State()
	lost := st == machine.LeaseLost || isLeaseholder(st) && !s.n.server.holds()
	if !(lost && s.router.holdFrom(b)) && s.router.answers(b) {
		return false
	}
	if !listens(msg) { // a listen keeps nothing busy (await)
		s.router.release(b)
	}
	return true
}

// waiting is ctx, ended if the client cancels the request msg while
// nothing serves it yet (an election runs); sent says msg leaves that wait,
// and whether it was cancelled. A message given at once to what serves is
// not read here: what serves it hears its cancel.
func (s *clientSession) waiting(ctx context.Context, msg json.RawMessage) (context.Context, func() (cancelled bool)) {
	if !s.router.serving() {
		if env, err := wire.ReadEnvelope(msg); err == nil && env.IsRequest() {
			return s.unsent.Begin(ctx, env.ID)
		}
	}
	return ctx, func() bool { return false }
}

// open opens the in-process session on srv, for the process's lifetime
// (mu held). A carried session is opened as it was: under its peer id,
// with its announcement, and no new number drawn
// (docs/design.md#nothing-is-lost); a new one claims the peer id its
// host's earlier client here had (host.go).
func (s *clientSession) open(srv *served) error {
	ctx := s.n.lifetime()
	if c := s.carried; c != nil {
		ctx = carry.WithAnnouncement(carry.WithPeerClaim(ctx, c.Peer), c.Announce)
	} else if id := s.n.hostPeer(); id != "" {
		ctx = carry.WithPeerClaim(ctx, id)
	}
	local, err := stdio.NewLocal(ctx, srv.surface.MCP, s.n.out, localSession)
	if err != nil {
		return fmt.Errorf("serving the client in process: %w", err)
	}
	s.local = local
	return nil
}

// adopt makes what the machine chose serve the client, the one place that
// does: bridge b when attached, else the in-process session. That session
// goes on as it is when it served already (alone, or while electing),
// else it is opened; a carried session is replayed onto what serves, before
// it answers anything. Then the client is told what changed. A ctx that
// ends first (handed over, or the attachment stopped) leaves the client to
// what comes next.
func (s *clientSession) adopt(ctx context.Context, b wire.Backend, h how) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The greeting's own server seats the session it greeted, however
	// many tries that takes; any other carries it there.
	greeted := s.greetedBy != "" && s.greetedBy == h.server
	defer func() {
		if err == nil {
			s.greetedBy = ""
		}
	}()
	if err := ctx.Err(); err != nil {
		return err
	}
	s.interim = false
	var srv *served
	if b == nil {
		s.bridgedTo = "" // served in process from now on
		// before anything answers: the client is told why
		told := h.as != machine.Alone || s.alone.Swap(&h.why) != nil
		var err error
		if srv, err = s.n.load(); err != nil {
			return err
		}
		if s.local != nil {
			wasAlone := h.as == machine.Leaseholder && s.alone.Swap(nil) != nil
			s.carried = nil
			s.use(s.local)
			was, now := s.local.Carried().Peer, srv.surface.Board.PeerID(localSession)
			// numbered anew as the board became the checkout's; back alone
			// with the id a server gave it (given), it is told as it joins
			if now != "" && now != was && h.as == machine.Leaseholder {
				s.local.Renumbered(now)
			}
			if wasAlone {
				s.joined(h, nil, was, now, srv)
				// its server became the checkout's: the layer goes on from
				// the checkout's generation, and majordomus://server says
				// another role, as for a client that joins through a bridge
				c := s.local.Carried()
				s.relisted(&c)
			}
			if !told { // it answered in process while electing: the client hears it now
				tell(srv, "majordomus: "+surface.AloneNotice(h.why))
			}
			return nil
		}
		if err := s.open(srv); err != nil {
			return err
		}
		b = s.local
	}
	c := s.carried
	var give func()
	if h.as == machine.Attached {
		// before the calls made alone are taken: one recorded as they are
		// carried has its answer wait until b serves, and is given then
		adopted := make(chan struct{})
		defer close(adopted)
		give = s.lateGiver(c, adopted)
	}
	if c != nil {
		// Onto a bridge, the calls this process answered that no shared
		// history kept go with the session, as they wait now (a term this
		// process won meanwhile may have written them). In process they
		// stay this process's own.
		replayed, history, mark := *c, s.n.co.unshared(), 0
		if srv == nil && history != nil {
			replayed.History, mark = history.Unshared()
		}
		if err := replayed.Replay(ctx, b); err != nil {
			s.given(b)
			return fmt.Errorf("carrying the client's session: %w", err)
		}
		if replayed.History != nil {
			history.Shared(mark) // the shared server has them now
		}
		if err := ctx.Err(); err != nil {
			s.given(b)
			return err
		}
	}
	s.use(b)
	s.told(h, b, c, srv, greeted)
	s.bridgedTo = ""
	if h.as == machine.Attached {
		s.bridgedTo = h.server
		// Nothing here serves on the layer now (the in-process session
		// left with told) but a lease-lost server draining: it is
		// watched again once something does.
		s.n.co.unwatch()
	}
	if give != nil {
		go give()
	}
	return nil
}

// use makes b serve the client (mu held); a bridge that leaves its server
// while the client is idle is lost at once.
func (s *clientSession) use(b wire.Backend) {
	s.served = true
	s.router.set(b)
	if l, ok := b.(interface {
		Done() <-chan struct{}
		Err() error
	}); ok {
		go func() {
			<-l.Done() // it left, or it was closed
			var g *bridge.Gone
			if errors.As(l.Err(), &g) {
				s.lost(b, g)
			}
		}()
	}
}

// unservable answers every request with every reason from now on, when
// the client was served (its bridge failed): its stdio stays open. It
// reports false when the client was never served, and is left as it is.
func (s *clientSession) unservable(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.served {
		return false
	}
	reasons := append(append([]string(nil), s.causes...), err.Error())
	s.router.failed(errors.New(strings.Join(reasons, "; and ")))
	return true
}

// aloneBecause is why the client is served alone, or nil.
func (s *clientSession) aloneBecause() *string { return s.alone.Load() }
