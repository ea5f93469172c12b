package node

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	boardpage "github.com/majordomus-mcp/majordomus-mcp/transport/board"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// sharedServer is the machine's Server port: the checkout's shared server
// this process runs as leaseholder. It serves its own stdio client in
// process, on the same MCP server as every HTTP session.
type sharedServer struct {
	node *Node

	mu       sync.Mutex
	http     *httpserver.Server
	served   *served
	stop     context.CancelFunc     // ends the lease watch
	term     atomic.Pointer[term]   // the lease it serves under now
	reg      *runtimes.Registration // this server's row in the fleet registry; nil when none was written
	keeper   *keeper                // writes the checkout's shared state this term; nil when none
	drains   sync.WaitGroup         // lease-lost servers serving on without their client (drainAlone), and row removals (deregister)
	draining []func()               // each one's end
	cut      bool                   // a signal came: no server is left serving (cutDrains)
}

// Start loads the layer, binds, serves, publishes the URL in the lease, and
// then serves the process's own client.
func (s *sharedServer) Start(ctx context.Context) error {
	n := s.node
	srv, err := n.load()
	if err != nil {
		return n.unloaded(err)
	}
	instance, key, ok := n.lease.Holding()
	if !ok {
		return fmt.Errorf("the lease at %s is not held by this process", n.lease.Path())
	}
	// A new term: a process that lost a lease and won another (a hand-over
	// that won the election) admits sessions again, and its board and
	// history are the checkout's as the server before left them before
	// it admits any.
	t := &term{instance: instance}
	s.term.Store(t)
	k := s.keep(srv, t)
	s.mu.Lock()
	s.keeper = k
	s.mu.Unlock()
	h, url, err := s.listen(srv, t, key)
	if err != nil {
		s.unkeep()
		return err // the machine says what failed: starting the shared server
	}
	// Stop shuts down the server, the row and the watch it finds here:
	// one that ran before they were put here cancelled ctx first, and they
	// are not made (its registration, asynchronous, is begun here).
	watchCtx, stop := context.WithCancel(context.Background())
	s.mu.Lock()
	if err := ctx.Err(); err != nil {
		s.mu.Unlock()
		stop()
		_ = h.Shutdown(ctx)
		s.unkeep()
		return err
	}
	s.http, s.served, s.stop = h, srv, stop
	s.reg = s.register(instance, url)
	s.mu.Unlock()
	if err := n.lease.Publish(url); err != nil {
		if errors.Is(err, registry.ErrLeaseNotOurs) {
			// Taken over while this server was starting: it is lease-lost
			// from the start, and the hand-over that follows elects again
			// for the client rather than serve it alone.
			s.unkeep()
			s.lose(t, "the lease was taken over while this server was starting: "+err.Error())
			return nil
		}
		stopping, cancel := context.WithTimeout(context.Background(), machine.DefaultStopGrace) // as any stop is bounded
		_ = h.Shutdown(stopping)
		cancel()
		s.unkeep()
		s.deregister()
		return fmt.Errorf("publishing the URL in the lease: %w", err)
	}
	n.setURL(url)
	// `serve` has no client whose leaving would start its end (the machine
	// keeps a headless leaseholder until a signal): the words say so.
	ends := "it ends once its own client has left and its last session has ended"
	if !n.withClient {
		ends = "it serves until a signal (SIGTERM, SIGINT, SIGHUP) stops it, with sessions or without"
	}
	n.log.Info(fmt.Sprintf("shared server listening on %s (MCP at %s/mcp); the one server of this checkout: every later majordomus-mcp here attaches to it, and %s", url, url, ends),
		zap.String("url", url), zap.String("lease", n.lease.Path()))
	go s.watchLease(watchCtx, t)
	return s.seatOwnClient(ctx, url)
}

// seatOwnClient serves the process's own client, if it has one, on its
// server at url. A lease lost meanwhile (truncated just after the URL was
// published, say) hands the client over once it is seated, or before it
// is, never with half a session: adopt and handOver run one after the
// other.
func (s *sharedServer) seatOwnClient(ctx context.Context, url string) error {
	n := s.node
	if !n.withClient {
		return nil
	}
	if err := n.session.adopt(ctx, nil, how{as: machine.Leaseholder, url: url}); err != nil {
		if ctx.Err() != nil {
			return err // handed over (or stopped) already: the client's session went with it
		}
		n.log.Warn("the client's session could not be carried onto this server", zap.Error(err))
	}
	return nil
}

// listen binds and serves the checkout's MCP server over HTTP.
func (s *sharedServer) listen(srv *served, t *term, key string) (*httpserver.Server, string, error) {
	n := s.node
	ln, err := httpserver.Listen(n.cfg.HTTPHost, n.cfg.HTTPPort, n.log)
	if err != nil {
		return nil, "", err
	}
	h := httpserver.New(httpserver.Config{
		MCP:         srv.surface.MCP,
		Identity:    s.identity(srv, t),
		Secret:      key,
		Refusal:     func() *httpserver.Refusal { return s.refusal(t) },
		IdleTimeout: n.cfg.Times.IdleTimeout,
		MaxSessions: n.cfg.MaxSessions,
		OnSessions:  func(count int) { s.sessionsChanged(t, count) },
		PresenceID:  bridge.PresenceID,
		Greeting:    func() any { return srv.surface.Greeting() },
		Board:       boardpage.New(newBoardSource(srv.surface, n.m.State), key, n.log.Named("board"), httpserver.Quiet(n.log.Named("board"))),
		Heard:       srv.surface.Board.Touch,
		Leaving:     srv.surface.Board.Leave,
		Logger:      n.log.Named("http"),
	})
	go func() { _ = h.Serve(ln) }()
	return h, httpserver.URLOf(ln.Addr()), nil
}

// identity is the answer of GET /, the probe.
func (s *sharedServer) identity(srv *served, t *term) func(bool) httpserver.Identity {
	return func(peers bool) httpserver.Identity {
		ix := srv.layer.Current()
		id := httpserver.Identity{
			Name:         surface.Name,
			Version:      release.Version(),
			Checkout:     ix.Name,
			RepositoryID: ix.RepositoryID,
			Profile:      s.node.co.Profile,
			Instance:     t.instance,
			Leaseholder:  isLeaseholder(s.node.m.State()) && s.refusal(t) == nil,
			Sessions:     srv.surface.Sessions(), // as majordomus_server counts them
		}
		if peers {
			id.Peers = boardOf(srv.surface.Board)
		}
		return id
	}
}

// term is one lease the server serves under: its instance, why it lost
// it, once it did, and (under the server's mu) its server's count of
// sessions and, once its client was handed over, that server's end.
type term struct {
	instance string
	lost     atomic.Pointer[httpserver.Refusal]
	sessions int
	drained  func()
}

// sessionsChanged is told every count of t's server's sessions: the
// machine's while the server serves its own client, and once the client was
// handed over, the end of the server at the last one (drainAlone). Under
// mu, no count of a term handed over reaches the machine, which may run a
// new term by then.
func (s *sharedServer) sessionsChanged(t *term, count int) {
	s.mu.Lock()
	t.sessions = count
	end := t.drained
	if end == nil {
		s.node.m.SessionsChanged(count) // never blocks
	}
	s.mu.Unlock()
	if end != nil && count == 0 {
		go end() // not in the request that ended the last session: Shutdown waits for it
	}
}

// refusal says why this server admits no new session, nil while it holds
// t's lease: not lost, and the lease file, read now, still carries its
// instance. A server resumed after a freeze thus never claims a lease that
// was taken over meanwhile, nor admits a session under it, before its
// watch has told it.
func (s *sharedServer) refusal(t *term) *httpserver.Refusal {
	if r := t.lost.Load(); r != nil {
		if r.URL == "" { // the lease named no server when it was lost: it may now
			if url := s.node.lease.CurrentURL(); url != "" {
				named := *r
				named.URL = url
				t.lost.CompareAndSwap(r, &named)
				return &named
			}
		}
		return r
	}
	if ours, reason := s.node.lease.Carries(t.instance); !ours {
		s.lose(t, reason)
	}
	return t.lost.Load()
}

// holds reports whether the server still holds the lease of its term, if
// it has one (refusal).
func (s *sharedServer) holds() bool {
	t := s.term.Load()
	return t == nil || s.refusal(t) == nil
}

// lose tells the machine, once a term, that t's lease is lost: whoever
// finds it first (the watch, a request, a publish that failed), and never
// a later term.
func (s *sharedServer) lose(t *term, reason string) {
	r := &httpserver.Refusal{Reason: "lease_lost", Message: "this server no longer holds this checkout's lease: " + reason}
	if t.lost.CompareAndSwap(nil, r) {
		s.node.m.LeaseReplaced(reason)
	}
}

// httpSessions is how many HTTP sessions the server serves now.
func (s *sharedServer) httpSessions() int {
	s.mu.Lock()
	h := s.http
	s.mu.Unlock()
	if h == nil {
		return 0
	}
	return h.Sessions()
}

// boardOf is who is attached to a board, as `status` shows it.
func boardOf(b *surface.Board) *httpserver.IdentityPeers {
	peers, attached := b.Peers()
	out := &httpserver.IdentityPeers{Count: attached, Peers: make([]httpserver.IdentityPeer, 0, attached)}
	for _, p := range peers {
		if p.Attached {
			out.Peers = append(out.Peers, httpserver.IdentityPeer{ID: p.ID, Client: p.Client.Name, Transport: p.Transport})
		}
	}
	return out
}

// watchLease tells the machine, once, when the lease file no longer
// carries this server's instance: gone, replaced, emptied or corrupted.
func (s *sharedServer) watchLease(ctx context.Context, t *term) {
	lost, err := s.node.lease.Lost(ctx, t.instance)
	if err != nil {
		s.node.log.Warn("the lease cannot be watched; it is read every second instead", zap.Error(err))
	}
	select {
	case reason := <-lost:
		s.lose(t, reason)
	case <-ctx.Done():
	}
}

// LoseLease switches the server, irreversibly, to lease-lost.
func (s *sharedServer) LoseLease(reason string) {
	n := s.node
	s.unkeep() // first: what its sessions do from now on is not the checkout's
	current := n.lease.CurrentURL()
	message := "this server no longer holds this checkout's lease: " + reason + ". It serves the sessions it already had and ends with them; a client that started majordomus-mcp moves to the current server by itself, and one connected over HTTP starts again to reach it"
	if t := s.term.Load(); t != nil {
		t.lost.Store(&httpserver.Refusal{Reason: "lease_lost", Message: message, URL: current})
	}
	s.markLost()
	n.log.Debug("new sessions are refused from now on", zap.String("current", current))
	s.mu.Lock()
	srv, h := s.served, s.http
	if s.stop != nil {
		s.stop()
	}
	s.mu.Unlock()
	if srv != nil {
		srv.surface.Board.Drain() // a moved client keeps its peer id on a term this process may win next
		srv.surface.Notify(mcp.LoggingLevelWarning, "majordomus: "+message)
	}
	if h != nil {
		h.EndStreams() // its idle bridges move now, not at their heartbeat
	}
}

// HandOver keeps the lease-lost server's own client's session, as its
// local session saw it, to be carried onto whatever the election gives
// next; the client's messages wait meanwhile. The server stops now if it
// serves nobody else, or else with its last session (drainAlone).
func (s *sharedServer) HandOver(ctx context.Context) error {
	n := s.node
	n.session.handOver(ctx) // the machine cancelled Start's ctx first: Start seats the client whole, or not at all
	n.lease.Forget()        // lost: the election that follows may win a new one
	if t := s.term.Load(); t != nil && s.drainAlone(t) {
		return nil
	}
	n.log.Info("handing this client over to the checkout's current server; this server stops", zap.String("lease", n.lease.Path()))
	return s.Stop(ctx)
}

// drainAlone lets t's server serve the sessions it has without its client,
// which was handed over, and reports whether it has any: the machine no
// longer runs it, and a term this process may win next runs a server of
// its own beside it, on the same surface. It stops, and leaves the fleet
// registry, with its last session; the process does not end before
// (Node.Run). Its sessions' calls are not the checkout's
// ([surface.Executions]).
func (s *sharedServer) drainAlone(t *term) bool {
	n := s.node
	s.mu.Lock()
	h, reg, sessions := s.http, s.reg, t.sessions
	if h == nil || sessions == 0 {
		t.drained = func() {} // stopped by Stop: no later count of it is the machine's
		s.mu.Unlock()
		return false
	}
	s.http, s.reg = nil, nil
	s.drains.Add(1)
	n.co.draining()
	end := sync.OnceFunc(func() {
		defer s.drains.Done()
		defer n.co.drained() // once it serves nobody
		ctx, cancel := context.WithTimeout(context.Background(), machine.DefaultStopGrace)
		defer cancel()
		_ = h.Shutdown(ctx)
		s.remove(reg)
		n.log.Info("shared server stopped with its last session; its client was handed over before", zap.String("lease", n.lease.Path()))
	})
	t.drained = end
	s.draining = append(s.draining, end)
	cut := s.cut
	s.mu.Unlock()
	n.log.Info("handing this client over to the checkout's current server; this server serves its other sessions until the last ends",
		zap.Int("sessions", sessions), zap.String("lease", n.lease.Path()))
	if cut {
		end()
	}
	return true
}

// cutDrains stops every server drainAlone left serving now, their
// sessions ended (a signal), and each one it leaves serving later.
func (s *sharedServer) cutDrains() {
	s.mu.Lock()
	s.cut = true
	ends := s.draining
	s.mu.Unlock()
	for _, end := range ends {
		end()
	}
}

// Stop shuts the server down within ctx.
func (s *sharedServer) Stop(ctx context.Context) error {
	s.mu.Lock()
	h, stop := s.http, s.stop
	s.mu.Unlock()
	defer s.deregister() // once the server no longer serves
	if stop != nil {
		stop()
	}
	s.node.session.settleLocal(ctx)
	s.node.session.closeLocal()
	if h == nil {
		return nil
	}
	err := h.Shutdown(ctx)
	s.unkeep() // once its last call is recorded
	s.node.log.Info("shared server stopped", zap.String("lease", s.node.lease.Path()))
	return err
}

// unkeep stops writing the checkout's shared state (see keeper.stop).
func (s *sharedServer) unkeep() {
	s.mu.Lock()
	k := s.keeper
	s.mu.Unlock()
	k.stop()
}

// isLeaseholder says whether a process in state s holds the lease.
func isLeaseholder(s machine.State) bool { return s == machine.Leaseholder || s == machine.OwnerLeft }
