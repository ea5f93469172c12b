package node

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// A host that spawns this server twice for one client (the TypeScript
// SDK's second revision probes in a sibling process, keeps the
// instructions it read there, and starts the process it keeps) finds its
// client under the peer id it was told: a 2026-07-28 client's id is the
// one its host's last client here had, when that was within a day and that
// client's process has ended (registry.PeerOfHost).

// processKey is a process by its pid and start token, or "" when its start
// cannot be read.
func processKey(pid int) string {
	start, err := proc.ProcessStart(pid)
	if pid <= 1 || err != nil {
		return ""
	}
	return strconv.Itoa(pid) + ":" + strconv.FormatUint(start, 10)
}

// hostKey is this process's host (its parent), as processKey says it.
func hostKey() string { return processKey(os.Getppid()) }

// runs reports whether the process key names still runs on this boot.
func runs(key string) bool {
	pid, start, ok := strings.Cut(key, ":")
	p, err1 := strconv.Atoi(pid)
	s, err2 := strconv.ParseUint(start, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return false
	}
	return proc.Env{}.Alive(p, s, "") != proc.OwnerGone
}

// newPeer draws a peer id for a 2026-07-28 client: its host's, else the
// next of the counter the board draws from; "" when neither answers (the
// server then knows the client by what it says of itself).
func (n *Node) newPeer() string {
	if id := n.hostPeer(); id != "" {
		return id
	}
	number, err := n.cfg.Checkout.peerNumbers(0) // set by New
	if err != nil {
		n.log.Warn("cannot number this client's peer id", zap.Error(err))
		return ""
	}
	return "p" + strconv.Itoa(number)
}

// drawSoon starts drawing the host's peer id while the election runs, if
// the lease directory that keeps it exists (else it is drawn once the
// lease made it): a bridge would hold the client's first message for it.
// It is called as the process starts to serve its client, and again when
// the client first speaks, in case the directory was made meanwhile.
func (n *Node) drawSoon() {
	if n.host == "" {
		return
	}
	if _, err := os.Stat(filepath.Dir(n.lease.Path())); err == nil {
		go n.hostPeer()
	}
}

// drawHostPeer draws the peer id of this process's client as its host's
// (see registry.PeerOfHost), or "" when the host or the lease directory
// cannot tell. Node.hostPeer draws it once per process, so that its client
// is one peer whatever serves it (a second draw would find this process
// alive, and give another number).
func (n *Node) drawHostPeer() string {
	if n.host == "" {
		return ""
	}
	number, again, err := registry.PeerOfHost(n.lease.Path(), n.host, processKey(os.Getpid()), runs, time.Now())
	if err != nil {
		n.log.Debug("the host's peer id is not remembered", zap.Error(err))
		return ""
	}
	id := "p" + strconv.Itoa(number)
	if again {
		n.log.Info("this client's host had a client here before, whose process has ended: this client is that peer again",
			zap.String("peer", id), zap.String("host", n.host))
	}
	return id
}

// onParentGone calls left if this process's parent, the host that spawned
// it, dies before ctx ends: a host killed hard leaves its children behind
// with stdin still open.
func onParentGone(ctx context.Context, log *zap.Logger, left func()) {
	select {
	case reason := <-proc.WatchParent(ctx):
		log.Info("the client left", zap.String("reason", reason))
		left()
	case <-ctx.Done():
	}
}
