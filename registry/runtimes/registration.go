package runtimes

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
)

// WriteTimeout bounds one write to the registry. SQLite's busy timeout
// (5 s) waits for another process's write; this adds room for the open and
// the migration.
const WriteTimeout = 10 * time.Second

// Registration is one shared server's row in the registry, from [Register]
// to [Registration.Remove]. The registry is evidence for fleet inventories
// only: a caller logs a failure and serves all the same, and an inventory
// then lists the server as unregistered (or its row as stale), which
// closes the gate — the honest answer.
type Registration struct {
	path      string
	runtimeID string
	pending   sync.WaitGroup // a state change being written
}

// Register writes row into the registry at path, right after the server's
// HTTP bind (docs/fleet.md). The write outlives ctx's cancellation: a row half
// written helps nobody.
func Register(ctx context.Context, path string, row fleet.Row) (*Registration, error) {
	err := Write(context.WithoutCancel(ctx), path, WriteTimeout, func(ctx context.Context, rt *DB) error {
		return rt.Register(ctx, row)
	})
	if err != nil {
		return nil, fmt.Errorf("registering runtime %s: %w", row.RuntimeID, err)
	}
	return &Registration{path: path, runtimeID: row.RuntimeID}, nil
}

// Path is the registry's path.
func (r *Registration) Path() string { return r.path }

// RuntimeID is the registered server's runtime id.
func (r *Registration) RuntimeID() string { return r.runtimeID }

// MarkLost records that the server lost its lease at now: from then on it
// is a draining member. It writes on a goroutine of its own (a write may
// wait for another process's lock) and tells done how it went.
func (r *Registration) MarkLost(now time.Time, done func(error)) {
	r.pending.Go(func() {
		done(r.update(func(ctx context.Context, rt *DB) error {
			return rt.SetState(ctx, r.runtimeID, StateLeaseLost, now)
		}))
	})
}

// Remove deletes the row, on a clean exit, once a pending state change is
// written.
func (r *Registration) Remove() error {
	r.pending.Wait()
	return r.update(func(ctx context.Context, rt *DB) error { return rt.Remove(ctx, r.runtimeID) })
}

func (r *Registration) update(do func(context.Context, *DB) error) error {
	return Write(context.Background(), r.path, WriteTimeout, do)
}
