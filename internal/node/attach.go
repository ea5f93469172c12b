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
// client to the shared server another process runs. The bridge it makes
// is the router's once it serves: the router hears when it leaves its
// server (router.lose), and closes it.
type attachment struct {
	node *Node

	mu     sync.Mutex
	bridge *transport.Bridge
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
	var safeTools map[string]bool // what the client's earlier bridges learned of the tools
	var peer string               // and the peer id it had
	var meta json.RawMessage      // and, a 2026-07-28 client, who it says it is
	if c := n.carriedSession(); c != nil {
		safeTools, peer, meta = c.SafeTools, c.Peer, c.Meta
	}
	b, err := transport.NewBridge(ctx, transport.BridgeConfig{
		URL:          url,
		Secret:       key,
		ProbeTimeout: n.cfg.Times.ProbeTimeout,
		Out:          n.out,
		Heartbeat:    n.cfg.Times.Heartbeat,
		IdleTimeout:  n.cfg.Times.IdleTimeout,
		Logger:       n.log.Named("bridge"),
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
	go func() { // replaying talks to the server: off the machine's loop
		err := n.serve(ctx, b, func(bool) bool {
			a.mu.Lock()
			defer a.mu.Unlock()
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
		// A bridge that was stopped is no longer the attachment's: its
		// failure is not news to the machine, which may be attached
		// through another bridge by now. The session could not be carried
		// there: the machine hears why the bridge left (a full server,
		// say, to be waited for), with the session it carries still whole.
		if err != nil && a.holds(b) {
			n.m.BridgeFailedWith(bridgeFailure(err.Error(), b.Err()))
		}
	}()
}

// holds reports whether b is the bridge this attachment relays through.
func (a *attachment) holds(b *transport.Bridge) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bridge == b
}

// Stop detaches from the server: the router retires the bridge.
func (a *attachment) Stop() {
	a.mu.Lock()
	b := a.bridge
	a.bridge = nil
	a.mu.Unlock()
	if b != nil {
		a.node.router.retire(b)
	}
}
