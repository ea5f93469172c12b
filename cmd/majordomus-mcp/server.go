package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"majordomus-mcp/internal/release"
	"majordomus-mcp/registry"
	"majordomus-mcp/surface"
	"majordomus-mcp/transport"
)

// sharedServer is the machine's Server port: the checkout's shared server
// this process runs as leaseholder. It serves its own stdio client in
// process, on the same MCP server as every HTTP session.
type sharedServer struct {
	node  *node
	lease *registry.LeaseFile

	mu       sync.Mutex
	http     *transport.HTTPServer
	served   *served
	local    *transport.Local
	instance string
	stop     context.CancelFunc // ends the lease watch
	lost     atomic.Pointer[transport.Refusal]
	reg      *registration // this server's row in the fleet registry; nil when none was written
}

// Start loads the layer, binds, serves, publishes the URL in the lease, and
// then serves the process's own client.
func (s *sharedServer) Start(ctx context.Context) error {
	n := s.node
	srv, err := n.co.load(n.life)
	if err != nil {
		return err
	}
	held, ok := s.lease.Held()
	if !ok {
		return fmt.Errorf("the lease at %s is not held by this process", n.leasePath)
	}
	ln, err := transport.Listen(n.env.opts.httpHost, n.env.opts.httpPort, n.env.log)
	if err != nil {
		return fmt.Errorf("starting the shared server: %w", err)
	}
	url := "http://" + ln.Addr().String()
	h := transport.NewHTTPServer(transport.HTTPConfig{
		MCP:         srv.surface.MCP,
		Identity:    s.identity(srv, held.Instance),
		Refusal:     s.lost.Load,
		IdleTimeout: n.times.idleTimeout,
		OnSessions:  n.m.SessionsChanged,
		Logger:      n.env.log.Named("http"),
	})
	go func() { _ = h.Serve(ln) }()
	s.register(ctx, held.Instance, url)
	if err := s.lease.Publish(url); err != nil {
		_ = h.Shutdown(context.Background())
		s.deregister()
		return fmt.Errorf("publishing the URL in the lease: %w", err)
	}
	watchCtx, stop := context.WithCancel(context.Background())
	s.mu.Lock()
	s.http, s.served, s.instance, s.stop = h, srv, held.Instance, stop
	s.mu.Unlock()
	n.process.setURL(url)
	n.process.leaseholder.Store(true)
	n.env.log.Info(fmt.Sprintf("shared server listening on %s (MCP at %s/mcp); the one server of this checkout: every later majordomus-mcp here attaches to it, and it ends when its last session does", url, url),
		zap.String("url", url), zap.String("lease", n.leasePath))
	go s.watchLease(watchCtx, held.Instance)

	if n.withClient {
		local, err := transport.NewLocal(ctx, srv.surface.MCP, n.out, "stdio")
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.local = local
		s.mu.Unlock()
		err = n.serve(ctx, local, func(carried bool) {
			if carried {
				n.env.log.Info("took over as the shared server; this session continues locally", zap.String("url", url))
				srv.surface.Notify(mcp.LoggingLevelWarning, "majordomus: the shared server this session used is gone; this process took over as the checkout's shared server at "+url)
			}
		})
		if err != nil {
			n.env.log.Warn("the client's session could not be carried onto this server", zap.Error(err))
		}
	}
	return nil
}

// identity is the answer of GET /, the probe.
func (s *sharedServer) identity(srv *served, instance string) func() transport.Identity {
	return func() transport.Identity {
		ix := srv.layer.Current()
		return transport.Identity{
			Name:         surface.Name,
			Version:      release.Version(),
			Checkout:     ix.Name,
			RepositoryID: ix.RepositoryID,
			Profile:      s.node.env.opts.profile,
			Instance:     instance,
			Leaseholder:  s.lost.Load() == nil,
		}
	}
}

// watchLease tells the machine, once, when the lease file no longer
// carries this server's instance: gone, replaced, emptied or corrupted.
func (s *sharedServer) watchLease(ctx context.Context, instance string) {
	changes, err := registry.Watch(ctx, s.node.leasePath, 0, 0)
	if err != nil {
		s.node.env.log.Warn("watching the lease failed; a lost lease is not noticed", zap.Error(err))
		return
	}
	for change := range changes {
		if !change.Holds(instance) {
			s.node.m.LeaseReplaced(lossReason(change.Snapshot))
			return
		}
	}
}

// lossReason says what became of the lease.
func lossReason(snap registry.Snapshot) string {
	switch {
	case snap.Found == registry.Missing:
		return "the lease file was removed"
	case len(snap.Raw) == 0:
		return "the lease file was emptied"
	}
	if doc, err := registry.Decode(snap.Raw); err == nil {
		if doc.HasURL() {
			return fmt.Sprintf("another process (pid %d) took the lease over and serves at %s", doc.PID, doc.URLString())
		}
		return fmt.Sprintf("another process (pid %d) took the lease over", doc.PID)
	}
	return "the lease file was overwritten with something that is not a lease"
}

// LoseLease switches the server, irreversibly, to lease-lost.
func (s *sharedServer) LoseLease(reason string) {
	n := s.node
	current := ""
	if doc, err := registry.Decode(registry.Read(n.leasePath).Raw); err == nil && doc.HasURL() {
		current = doc.URLString()
	}
	message := "this server no longer holds this checkout's lease: " + reason + ". It serves the sessions it already had and ends with them; start the client again, and its election finds the current server"
	s.lost.Store(&transport.Refusal{Reason: "lease_lost", Message: message, URL: current})
	n.process.lost.Store(true)
	n.process.leaseholder.Store(false)
	s.markLost()
	n.env.log.Debug("new sessions are refused from now on", zap.String("current", current))
	s.mu.Lock()
	srv := s.served
	if s.stop != nil {
		s.stop()
	}
	s.mu.Unlock()
	if srv != nil {
		srv.surface.Notify(mcp.LoggingLevelWarning, "majordomus: "+message)
	}
}

// Stop shuts the server down within ctx.
func (s *sharedServer) Stop(ctx context.Context) error {
	s.mu.Lock()
	h, local, stop := s.http, s.local, s.stop
	s.mu.Unlock()
	defer s.deregister() // once the server no longer serves
	if stop != nil {
		stop()
	}
	if local != nil {
		local.Close()
	}
	if h == nil {
		return nil
	}
	err := h.Shutdown(ctx)
	s.node.env.log.Info("shared server stopped", zap.String("lease", s.node.leasePath))
	return err
}
