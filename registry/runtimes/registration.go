package runtimes

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
//
// Its writes run on goroutines of their own, one after another in the
// order asked: a server publishes its URL without waiting for the
// registry's lock or its disk (a write took 6–9 ms here), and a state
// change never overtakes the row it changes, nor a removal the change.
type Registration struct {
	path      string
	runtimeID string

	mu     sync.Mutex
	last   <-chan struct{} // closed once the write asked last has ended
	failed bool            // the row was not written: nothing after it is

	trying context.Context // the row's writes, until Remove: then the row is no longer tried
	stop   context.CancelFunc
}

// A row that could not be written is tried again, first after retryFirst,
// then at doubling intervals up to retryMax: a registry locked for long,
// or not there yet, is not a server unregistered for its whole life.
const (
	retryFirst = time.Second
	retryMax   = time.Minute
)

// Register writes row into the registry at path, on a goroutine of its
// own right after the server's HTTP bind (docs/fleet.md), and tells done
// how it went: the first failure, and then, tried again until the row is
// written or removed, the write that succeeded. The write outlives the
// caller: a row half written helps nobody.
func Register(path string, row fleet.Row, done func(error)) *Registration {
	r := &Registration{path: path, runtimeID: row.RuntimeID}
	r.trying, r.stop = context.WithCancel(context.Background())
	r.queue(func() {
		ctx := context.Background() // the first write is waited for, as every later one (then)
		for try, wait := 0, retryFirst; ; try, wait = try+1, min(2*wait, retryMax) {
			err := Write(ctx, path, WriteTimeout, func(ctx context.Context, rt *DB) error { return rt.Register(ctx, row) })
			if err != nil {
				err = fmt.Errorf("registering runtime %s: %w", row.RuntimeID, err)
			}
			if err == nil || try == 0 {
				done(err)
			}
			if err == nil {
				return
			}
			ctx = r.trying // a try again ends with a removal, rolled back; a wait on another writer's lock ends with its busy timeout (5 s)
			select {
			case <-time.After(wait):
			case <-r.trying.Done():
				r.mu.Lock()
				r.failed = true // nothing follows a row never written
				r.mu.Unlock()
				return
			}
		}
	})
	return r
}

// Path is the registry's path.
func (r *Registration) Path() string { return r.path }

// RuntimeID is the registered server's runtime id.
func (r *Registration) RuntimeID() string { return r.runtimeID }

// MarkLost records that the server lost its lease at now: from then on it
// is a draining member. It tells done how it went, unless the row was
// never written or the registry is gone since.
func (r *Registration) MarkLost(now time.Time, done func(error)) {
	r.then(func(ctx context.Context, rt *DB) error { return rt.SetState(ctx, r.runtimeID, StateLeaseLost, now) }, done)
}

// Remove deletes the row, on a clean exit, once every earlier write has
// ended. It reports whether there was a row to remove.
func (r *Registration) Remove() (removed bool, err error) {
	r.stop()
	<-r.then(func(ctx context.Context, rt *DB) (err error) {
		removed, err = rt.Remove(ctx, r.runtimeID)
		return err
	}, func(e error) { err = e })
	return removed, err
}

// then runs a change of the row after every write asked before it, and
// gives done its outcome; it does not run once the row could not be
// written, nor once the registry is gone (deleted with the row: writing
// would make it again, empty). The channel is closed once it has ended.
func (r *Registration) then(write func(context.Context, *DB) error, done func(error)) <-chan struct{} {
	return r.queue(func() {
		r.mu.Lock()
		failed := r.failed
		r.mu.Unlock()
		if _, err := os.Stat(r.path); failed || errors.Is(err, fs.ErrNotExist) {
			return
		}
		done(Write(context.Background(), r.path, WriteTimeout, write))
	})
}

// queue runs do after everything queued before it has ended, on a
// goroutine of its own; the channel is closed once do has ended.
func (r *Registration) queue(do func()) <-chan struct{} {
	end := make(chan struct{})
	r.mu.Lock()
	before := r.last
	r.last = end
	r.mu.Unlock()
	go func() {
		defer close(end)
		if before != nil {
			<-before
		}
		do()
	}()
	return end
}
