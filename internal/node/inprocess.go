package node

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// The client's in-process session. A leaseholder and a process served
// alone serve their stdio client on this process's own surface, in one
// session that outlives the change between them: a process that joins from
// alone as the leaseholder keeps the very session it served alone, on the
// board that is now the checkout's. Attaching from alone carries it, as a
// failover carries a bridge's session, and closes it once the bridge serves.

// inProcess returns the client's in-process session, opening it on srv
// when there is none; fresh says it was just opened.
func (n *Node) inProcess(srv *served) (local *transport.Local, fresh bool, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.chosen = true
	if n.local != nil {
		return n.local, false, nil
	}
	ctx := n.life
	if c := n.carried; c != nil {
		// opened as it was: under its peer id, with its announcement, and
		// no new number drawn (docs/design.md#nothing-is-lost)
		ctx = transport.WithCarriedAnnouncement(transport.WithPeerClaim(ctx, c.Peer), c.Announce)
	}
	// The session lives as long as the process, whichever mode serves it.
	local, err = transport.NewLocal(n.registering(ctx), srv.surface.MCP, n.out, localSession)
	if err != nil {
		return nil, false, err
	}
	n.local = local
	return local, true, nil
}

// earlySession is the router's interim session: the client's in-process
// session, opened on this process's surface, answering what is the same in
// every mode while the election runs (docs/design.md#sharing-heals:
// starting is never held hostage by the lease). It is nil once the election
// chose what serves the client, or when the client was served before (a
// failover carries its session instead), or when the layer cannot be loaded
// (the election's end says why). Whatever serves next takes the session
// over: the leaseholder and alone keep it, attaching carries it.
func (n *Node) earlySession() transport.Backend {
	n.mu.Lock()
	never := !n.chosen && !n.everServed && n.carried == nil
	n.mu.Unlock()
	if !never {
		return nil
	}
	srv, err := n.load()
	if err != nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.chosen || n.everServed || n.carried != nil {
		return nil
	}
	if n.local == nil {
		local, err := transport.NewLocal(n.registering(n.life), srv.surface.MCP, n.out, localSession)
		if err != nil {
			return nil
		}
		n.local = local
		n.log.Info("answering this client's handshake and the layer's lists in process while the election runs; what needs the board waits for it",
			zap.String("lease", n.lease.Path()))
	}
	return n.local
}

// registering is ctx for opening the client's in-process session (n.mu
// held): it claims the peer id its host's earlier client here had (see
// host.go), unless the session is a carried one, whose replay claims its
// own.
func (n *Node) registering(ctx context.Context) context.Context {
	if n.carried != nil || n.host == "" {
		return ctx
	}
	if id := n.hostPeer(); id != "" {
		return transport.WithPeerClaim(ctx, id)
	}
	return ctx
}

// inProcessSession is the client's in-process session, or nil.
func (n *Node) inProcessSession() *transport.Local {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.local
}

// closeInProcess ends the client's in-process session, if any: it leaves
// the board.
func (n *Node) closeInProcess() {
	n.mu.Lock()
	local := n.local
	n.local = nil
	n.mu.Unlock()
	if local != nil {
		n.router.retire(local)
	}
}

// resume makes the in-process session serve the client again, as it is:
// nothing is carried onto it, since it is the session.
func (n *Node) resume(local *transport.Local) {
	n.mu.Lock()
	n.carried, n.everServed = nil, true
	n.mu.Unlock()
	n.router.set(local)
}

// settleBound bounds how long carrying the in-process session waits for
// the messages it is answering: a long-lived one (a 2026-07-28 listen
// stream) must not hold the client back.
const settleBound = time.Second

// carryInProcess makes the in-process session the one to carry: the
// client's messages wait from now on, those it is answering are let
// finish, and what it has seen of the session is what the next backend is
// given. It reports whether there was one.
func (n *Node) carryInProcess(ctx context.Context) bool {
	n.mu.Lock()
	n.chosen = true
	local := n.local
	n.mu.Unlock()
	if local == nil {
		return false
	}
	n.router.hold()
	settle, cancel := context.WithTimeout(ctx, settleBound)
	n.router.settle(settle, local)
	cancel()
	c := local.Carried()
	n.mu.Lock()
	if n.carried != nil { // what earlier bridges learned of the tools
		for tool, safe := range n.carried.SafeTools {
			if _, known := c.SafeTools[tool]; !known {
				if c.SafeTools == nil {
					c.SafeTools = map[string]bool{}
				}
				c.SafeTools[tool] = safe
			}
		}
	}
	n.carried = &c
	n.mu.Unlock()
	return true
}

// joined tells a client that was served alone that it shares now: in the
// log, and in a notifications/message to a legacy client (a 2026-07-28 one
// is sent only what its listen asked for), at warning as the notice that
// it was served alone was, so that whoever heard that hears this. was is its peer id before, now
// its id on the shared board; they differ when that board had given was to
// another client already.
func (n *Node) joined(url, was, now string, legacy bool) {
	msg := "majordomus: this session now uses the checkout's shared server at " + url + ": one board and one history with the other agents here"
	if was != "" && now != "" && was != now {
		msg += fmt.Sprintf("; it is peer %s there (%s is another client's)", now, was)
	}
	n.log.Info("joined the checkout's shared server; this client is no longer served alone",
		zap.String("url", url), zap.String("peer", now), zap.String("peer_before", was))
	if legacy && n.out != nil {
		_ = n.out.WriteValue(mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "majordomus", msg))
	}
}
