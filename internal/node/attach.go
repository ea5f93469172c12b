package node

import (
	"context"
	"encoding/json"
	"sync"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// attachment is the machine's Bridge port: it relays this process's stdio
// client to the shared server another process runs.
type attachment struct {
	node *Node

	mu        sync.Mutex
	bridge    *transport.Bridge
	replaying *transport.Bridge // the bridge the carried session is being replayed onto
	// replayCause is why the replay's bridge failed, which the replay's
	// error only quotes: a full server, say, to be waited for.
	replayCause error
}

// Attach starts bridging to the live server. A bridge connects on the
// client's first message; a session carried from a failed bridge is
// replayed first.
func (a *attachment) Attach(ctx context.Context, live machine.Observation) {
	n := a.node
	url, key := live.URL, n.lease.Key(live)
	// The session served alone, or answered while electing, is carried.
	inProcess := n.carryInProcess(ctx)
	fromAlone := inProcess && n.alone.Load() != nil
	var b *transport.Bridge
	var safeTools map[string]bool // what the client's earlier bridges learned of the tools
	var peer string               // and the peer id it had
	var meta json.RawMessage      // and, a 2026-07-28 client, who it says it is
	if c := n.carriedSession(); c != nil {
		safeTools, peer, meta = c.SafeTools, c.Peer, c.Meta
	}
	failover := func(ctx context.Context, cause error, carried transport.Carried) (transport.Backend, error) {
		a.mu.Lock()
		if a.replaying == b {
			// The session could not be carried there: the replay fails,
			// and its failure is what the machine hears, with the session
			// it carries still whole.
			a.replayCause = cause
			a.mu.Unlock()
			return nil, cause
		}
		// The machine stops this attachment while it elects again; the
		// failing bridge is not closed then: it hands the message it holds
		// to whatever serves next.
		if a.bridge == b {
			a.bridge = nil
		}
		a.mu.Unlock()
		return n.failover(ctx, cause, carried)
	}
	b, err := transport.NewBridge(ctx, transport.BridgeConfig{
		URL:          url,
		Secret:       key,
		ProbeTimeout: n.cfg.Times.ProbeTimeout,
		Out:          n.out,
		Heartbeat:    n.cfg.Times.Heartbeat,
		IdleTimeout:  n.cfg.Times.IdleTimeout,
		Logger:       n.log.Named("bridge"),
		Failover:     failover,
		// A server that answers no probe for the busy grace while a
		// message waits for it is stopped or frozen: gone, for that
		// message (docs/design.md#server-and-bridge).
		Alive: func(ctx context.Context) error {
			_, err := registry.FetchIdentity(ctx, url, key, n.cfg.Times.ProbeTimeout)
			return err
		},
		GoneAfter: n.cfg.Times.BusyGrace,
		SafeTools: safeTools,
		Peer:      peer,
		Meta:      meta,
		NewPeer:   n.newPeer,
	})
	if err != nil {
		n.m.BridgeFailed(err.Error())
		return
	}
	a.mu.Lock()
	a.bridge = b
	a.mu.Unlock()
	n.setURL(url)
	if n.carriedSession() == nil {
		n.log.Info("a shared server for this checkout is already running at "+url+"; bridging this stdio session to it", zap.String("url", url))
		n.serve(ctx, b, nil)
		return
	}
	a.mu.Lock()
	a.replaying, a.replayCause = b, nil
	a.mu.Unlock()
	go func() { // replaying talks to the server: off the machine's loop
		err := n.serve(ctx, b, func(bool) bool {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.replaying = nil
			if a.bridge != b {
				return false // stopped while replaying
			}
			if inProcess {
				c := n.carriedSession()
				n.alone.Store(nil)
				n.closeInProcess() // it leaves this process's own board, which nobody else sees
				if fromAlone {
					n.joined(url, c.Peer, b.PeerID(), len(c.Initialize) > 0)
				} else {
					n.log.Info("bridging this stdio session, answered in process while electing, to the shared server at "+url, zap.String("url", url), zap.String("peer", b.PeerID()))
				}
				return true
			}
			n.log.Info("re-attached to the shared server", zap.String("url", url))
			return true
		})
		// A bridge that already failed over, or was stopped, is no longer
		// the attachment's: its failure is not news to the machine, which
		// may be attached through another bridge by now.
		if err != nil && a.holds(b) {
			a.mu.Lock()
			cause := a.replayCause
			a.mu.Unlock()
			n.m.BridgeFailedWith(bridgeFailure(err.Error(), cause))
		}
	}()
}

// holds reports whether b is the bridge this attachment relays through.
func (a *attachment) holds(b *transport.Bridge) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bridge == b
}

// Stop detaches from the server.
func (a *attachment) Stop() {
	a.mu.Lock()
	b := a.bridge
	a.bridge = nil
	a.mu.Unlock()
	if b != nil {
		b.Close()
	}
}
