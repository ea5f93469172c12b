package node

import (
	"context"
	"encoding/json"
	"sync"

	"majordomus-mcp/transport"
)

// router is the stdio loop's backend for the life of the process. It hands
// each message to whatever serves the client now — the in-process session
// of a leaseholder or of a process served alone, or a bridge — and holds
// messages while nothing does (the process is electing). The loop, not the
// backend, owns stdin and stdout, so the backend can change under it.
type router struct {
	mu       sync.Mutex
	current  transport.Backend
	fail     error         // set when nothing can serve the client
	changed  chan struct{} // closed and replaced whenever current or fail changes
	answered func()        // runs once, after the next answer
}

func newRouter() *router { return &router{changed: make(chan struct{})} }

// set makes b serve every message from now on.
func (r *router) set(b transport.Backend) { r.update(b, nil) }

// failed answers every request from now on with err.
func (r *router) failed(err error) { r.update(nil, err) }

// hold makes messages wait until a new backend is set.
func (r *router) hold() { r.update(nil, nil) }

func (r *router) update(b transport.Backend, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.fail = b, err
	close(r.changed)
	r.changed = make(chan struct{})
}

// currentBackend returns what serves the client now, or nil.
func (r *router) currentBackend() transport.Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// closeCurrent ends the current backend's session (the client has left):
// a local session leaves the board, a bridge says goodbye to its server.
func (r *router) closeCurrent() {
	if c, ok := r.currentBackend().(interface{ Close() }); ok {
		c.Close()
	}
}

// next waits for a backend (or a failure) other than old.
func (r *router) next(ctx context.Context, old transport.Backend) (transport.Backend, error) {
	for {
		r.mu.Lock()
		b, err, changed := r.current, r.fail, r.changed
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if b != nil && b != old {
			return b, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Handle gives msg to the current backend, waiting for one if need be.
func (r *router) Handle(ctx context.Context, msg json.RawMessage) []byte {
	b, err := r.next(ctx, nil)
	if err != nil {
		return transport.Unavailable(msg, err)
	}
	answer := b.Handle(ctx, msg)
	r.mu.Lock()
	then := r.answered
	r.answered = nil
	r.mu.Unlock()
	if then != nil {
		then()
	}
	return answer
}

// afterNextAnswer runs f once the next message has been answered, before
// the answer is written; f must be quick.
func (r *router) afterNextAnswer(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = f
}
