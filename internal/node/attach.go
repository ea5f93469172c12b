package node

import (
	"context"
	"fmt"
	"sync"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
)

// attachment is the machine's Bridge port: it relays this process's stdio
// client to the shared server another process runs. The bridge it makes
// is the client session's once it serves, which hears when it leaves its
// server (clientSession.lost), and closes it.
type attachment struct {
	node *Node

	mu   sync.Mutex
	stop func() // ends the adoption of the bridge, and retires it; nil when none
}

// Attach starts bridging to the live server. A bridge connects on the
// client's first message; the client's session, served in process before
// or carried from a failed bridge, is replayed first.
func (a *attachment) Attach(ctx context.Context, live machine.Observation) {
	n := a.node
	url := live.URL
	instance, key, proven := n.lease.Key(live)
	b, err := bridge.New(ctx, bridge.Config{
		URL:          url,
		Secret:       key,
		ProbeTimeout: n.cfg.Times.ProbeTimeout,
		Proven:       proven,
		Out:          n.out,
		Heartbeat:    n.cfg.Times.Heartbeat,
		IdleTimeout:  n.cfg.Times.IdleTimeout,
		Logger:       n.log.Named("bridge"),
		// A server that answers no probe for the busy grace while a
		// message waits for it is stopped or frozen: gone, for that
		// message (docs/design.md#server-and-bridge). One whose owner
		// has begun to exit is gone at once, unprobed: its listener may
		// hold the probe until the system closes it.
		Alive: func(ctx context.Context) error {
			if n.lease.Ending(live) {
				return fmt.Errorf("%w: its owner (pid %d) has begun to exit", bridge.ErrGone, live.Owner)
			}
			_, err := registry.FetchIdentity(ctx, url, key, n.cfg.Times.ProbeTimeout)
			return err
		},
		GoneAfter: n.cfg.Times.BusyGrace,
		Current:   func() bool { ours, _ := n.lease.Carries(instance); return ours },
		Carried:   n.session.carryLocal(ctx),
		NewPeer:   n.newPeer,
	})
	if err != nil {
		n.m.BridgeFailedWith(n.session.failure(err.Error(), err))
		return
	}
	adopting, stop := context.WithCancel(ctx)
	a.mu.Lock()
	a.stop = func() { stop(); n.session.retire(b) }
	a.mu.Unlock()
	n.setURL(url)
	go func() { // replaying talks to the server: off the machine's loop
		err := n.session.adopt(adopting, b, how{as: machine.Attached, url: url, server: instance})
		// A bridge that was stopped is no longer the attachment's: its
		// failure is not news to the machine, which may be attached
		// through another bridge by now. The session could not be carried
		// there: the machine hears why the bridge left (a full server,
		// say, to be waited for), with the session it carries still whole,
		// and whether the client is still served alone.
		if err != nil && adopting.Err() == nil {
			n.m.BridgeFailedWith(n.session.failure(err.Error(), b.Err()))
		}
	}()
}

// Stop detaches from the server: the client's session retires the bridge.
func (a *attachment) Stop() {
	a.mu.Lock()
	stop := a.stop
	a.stop = nil
	a.mu.Unlock()
	if stop != nil {
		stop()
	}
}
