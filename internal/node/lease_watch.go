package node

import (
	"context"
	"fmt"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
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
	changes, err := watchLeaseFile(ctx, e.file.Path, 0, lostFallback)
	if err != nil { // no file events: no inotify instance or watch left, say
		changes = registry.Poll(ctx, e.file.Path, registry.DefaultFallbackEvery)
	}
	lost := make(chan string, 1)
	go func() {
		for change := range changes {
			if change.Found == registry.Unreadable {
				continue // out of descriptors, say: a lease that cannot be read now is not lost
			}
			if !change.Holds(instance) {
				lost <- lossReason(change.Snapshot)
				return
			}
		}
	}()
	return lost, err
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
