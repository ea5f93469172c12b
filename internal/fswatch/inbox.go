package fswatch

import (
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Inbox holds what the watcher reported of one Watch's names since it was
// last taken.
type Inbox struct {
	ready chan struct{} // holds a value while something waits to be taken
	mu    sync.Mutex
	ops   map[string]fsnotify.Op // what happened to each name, at most one entry a name
	errs  []error                // the last few
}

func newInbox() Inbox {
	return Inbox{ready: make(chan struct{}, 1), ops: map[string]fsnotify.Op{}}
}

func (in *Inbox) put(ev fsnotify.Event) {
	in.mu.Lock()
	in.ops[ev.Name] |= ev.Op
	in.mu.Unlock()
	in.wake()
}

func (in *Inbox) fail(err error) {
	in.mu.Lock()
	in.errs = append(in.errs[max(0, len(in.errs)-15):], err)
	in.mu.Unlock()
	in.wake()
}

func (in *Inbox) wake() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
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
