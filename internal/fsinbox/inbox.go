// Package fsinbox takes a file watcher's events and errors as they come,
// on a goroutine of its own. fsnotify's reader waits until each is taken,
// and on Windows Add and Remove wait for that reader, so the goroutine that
// adds and removes watches must not be the one that takes them: under a
// burst of writes, or an error to report, it would wait on itself for ever.
//
// What waits is kept one entry a name (the union of what happened to it)
// and the last few errors, so a slow taker never makes it pile up.
package fsinbox

import (
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Inbox holds what a watcher reported since it was last taken.
type Inbox struct {
	ready chan struct{} // holds a value while something waits to be taken
	mu    sync.Mutex
	ops   map[string]fsnotify.Op // what happened to each name, at most one entry a name
	errs  []error                // the last few
}

// New takes w's events and errors until w is closed. Make it before the
// first Add.
func New(w *fsnotify.Watcher) *Inbox {
	in := &Inbox{ready: make(chan struct{}, 1), ops: map[string]fsnotify.Op{}}
	go func() {
		events, errs := w.Events, w.Errors
		for events != nil || errs != nil {
			select {
			case ev, ok := <-events:
				if !ok {
					events = nil
					continue
				}
				in.mu.Lock()
				in.ops[ev.Name] |= ev.Op
				in.mu.Unlock()
			case err, ok := <-errs:
				if !ok {
					errs = nil
					continue
				}
				in.mu.Lock()
				in.errs = append(in.errs[max(0, len(in.errs)-15):], err)
				in.mu.Unlock()
			}
			select {
			case in.ready <- struct{}{}:
			default:
			}
		}
	}()
	return in
}

// Ready has a value while something waits to be taken.
func (in *Inbox) Ready() <-chan struct{} { return in.ready }

// Take returns what came since the last take, as events, one a name.
func (in *Inbox) Take() ([]fsnotify.Event, []error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	events := make([]fsnotify.Event, 0, len(in.ops))
	for name, op := range in.ops {
		events = append(events, fsnotify.Event{Name: name, Op: op})
	}
	errs := in.errs
	clear(in.ops)
	in.errs = nil
	return events, errs
}
