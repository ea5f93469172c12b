package node

import (
	"context"
	"fmt"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"go.uber.org/zap"
)

// Watch relays the lease file's changes while the machine elects: its
// first report, what the path holds as the watch starts, only when that is
// not what the last attempt judged.
func (e *leaseFile) Watch(ctx context.Context) (<-chan struct{}, error) {
	changes, err := registry.Watch(ctx, e.file.Path, 0, 0)
	if err != nil {
		return nil, err
	}
	judged := e.judged.Load()
	out := make(chan struct{})
	go func() {
		defer close(out)
		for c := range changes {
			if judged != nil && c.Same(*judged) {
				judged = nil
				continue
			}
			judged = nil
			select {
			case out <- struct{}{}:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}

// lostFallback is how often a leaseholder reads its lease though no event
// said it changed: events tell a change at once (the move or removal of
// its directory, or of one on its way from .ai, included), so this covers only one they lost; and every
// request the server answers checks the lease first (Carries), so a lost
// event delays only what an idle server does about it. An idle
// leaseholder, which lives as long as its client, is not woken every few
// seconds for it (issue 33's idle cost, B11).
const lostFallback = time.Minute

// watchLeaseFile is registry.Watch; a test makes it fail as a system with
// no inotify instance left does.
var watchLeaseFile = registry.Watch

func (e *leaseFile) Lost(ctx context.Context, instance string) (<-chan string, error) {
	watching, stopWatching := context.WithCancel(ctx)
	changes, err := watchLeaseFile(watching, e.file.Path, 0, lostFallback)
	if err != nil { // no file events: no inotify instance or watch left, say
		changes = registry.Poll(watching, e.file.Path, registry.DefaultFallbackEvery)
	}
	lost, canWatch := make(chan string, 1), err == nil
	go func() {
		defer func() { stopWatching() }()
		var refused time.Time // when a watch was last refused: tried again a fallback later, not at each reading
		for polling := !canWatch; ; {
			change, ok := <-changes
			if !ok {
				return
			}
			switch snap := e.current(change.Snapshot); {
			case snap.Found == registry.Unreadable:
				continue // out of descriptors, say: a lease that cannot be read now is not lost
			case !e.stillHolds(snap, instance):
				lost <- lossReason(snap)
				return
			case !canWatch || e.gone.Load() == polling || time.Since(refused) < lostFallback:
				continue
			}
			// Gone with its checkout, the lease's directory may come back
			// where no file event tells (its watches went with it): it is
			// read every second until it is back, then watched again.
			stopWatching()
			watching, stopWatching = context.WithCancel(ctx)
			if polling = e.gone.Load(); !polling {
				if watched, err := watchLeaseFile(watching, e.file.Path, 0, lostFallback); err == nil {
					changes, refused = watched, time.Time{}
					continue
				}
				// read every second meanwhile: tried again at each reading,
				// a watch that cannot be had (no inotify watch left) would be
				// tried without end, the poll's first report being at once
				polling, refused = true, time.Now()
			}
			changes = registry.Poll(watching, e.file.Path, registry.DefaultFallbackEvery)
		}
	}()
	return lost, err
}

// stillHolds reports whether snap, read at the lease path, is instance's
// lease still: it holds instance, or is missing with the checkout it was
// in, moved or removed (registry.CheckoutGone), which nobody can have
// replaced. Its server then serves its clients on, as one server, rather
// than each of them alone with nothing read (a bridged client has no layer
// of its own); said once a time. snap is what the path holds now
// (current).
func (e *leaseFile) stillHolds(snap registry.Snapshot, instance string) bool {
	if snap.Holds(instance) {
		e.gone.Store(false)
		return true
	}
	if snap.Found != registry.Missing || !registry.CheckoutGone(e.file.Path) {
		return false
	}
	if !e.gone.Swap(true) {
		e.log.Warn("the checkout is gone from "+e.observer.Root+" (moved or removed), its lease with it: its server serves the clients it has on; a client started where the checkout is now gets a server there",
			zap.String("lease", e.file.Path))
	}
	return true
}

// current is snap, read at the lease path, or what the path holds now
// when snap found it missing and the checkout is there: a reading made
// while the checkout was away, and judged once it is back, would take a
// lease that came back with it for removed.
func (e *leaseFile) current(snap registry.Snapshot) registry.Snapshot {
	if snap.Found == registry.Missing && !registry.CheckoutGone(e.file.Path) {
		return registry.Read(e.file.Path)
	}
	return snap
}

// lossReason says what became of the lease.
func lossReason(snap registry.Snapshot) string {
	switch {
	case snap.Found == registry.Missing:
		return "the lease file was removed"
	case snap.Found != registry.Regular: // a directory, a link or a special file
		return "the lease file was replaced by a " + snap.Found.String()
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
