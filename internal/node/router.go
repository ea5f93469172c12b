package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// router is the stdio loop's backend for the life of the process. It hands
// each message to whatever serves the client now — the in-process session
// of a leaseholder or of a process served alone, or a bridge — and holds
// messages while nothing does (the process is electing). The loop, not the
// backend, owns stdin and stdout, so the backend can change under it.
//
// It is the one place that swaps or closes a backend. A bridge that
// leaves its server reports a *transport.Gone, to a message or on its
// Done channel: the router then holds the client's messages, tells the
// node (lost: the machine elects again, and sets what serves next), closes
// the bridge, and answers the message the failure left from what serves
// next (Gone.Resend, back through the router).
type router struct {
	mu       sync.Mutex
	current  transport.Backend
	fail     error         // set when nothing can serve the client
	changed  chan struct{} // closed and replaced whenever current or fail changes
	answered func()        // runs once, after the next answer
	// busy counts the messages each backend is answering; eased, made
	// while settle waits, is closed when a count falls.
	busy  map[transport.Backend]int
	eased chan struct{}

	// early, when set, gives the in-process session that answers what is
	// the same in every mode (transport.AnsweredEarly) while nothing serves
	// the client yet, once such a request has waited patience; nil when it
	// may not (the client was served already). interim is that session,
	// until a backend is set.
	early    func() transport.Backend
	patience time.Duration
	interim  transport.Backend

	// lost hears, once, that the bridge serving the client left its
	// server, with the session to carry; messages wait meanwhile.
	lost func(*transport.Gone)
}

// relayer is a backend that can report that it left its server (a
// bridge): its answers come with a *transport.Gone error then.
type relayer interface {
	Relay(ctx context.Context, msg json.RawMessage) ([]byte, error)
}

// leaving is a backend that can leave its server while the client is
// idle: Done is closed then, and Err says why.
type leaving interface {
	Done() <-chan struct{}
	Err() error
}

func newRouter() *router {
	return &router{changed: make(chan struct{}), busy: map[transport.Backend]int{}}
}

// set makes b serve every message from now on; a bridge that leaves its
// server while the client is idle is handed on at once.
func (r *router) set(b transport.Backend) {
	r.update(b, nil)
	if l, ok := b.(leaving); ok {
		go func() {
			<-l.Done() // it left, or it was closed
			var g *transport.Gone
			if errors.As(l.Err(), &g) {
				r.lose(b, g)
			}
		}()
	}
}

// failed answers every request from now on with err.
func (r *router) failed(err error) { r.update(nil, err) }

// hold makes messages wait until a new backend is set.
func (r *router) hold() { r.update(nil, nil) }

func (r *router) update(b transport.Backend, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.fail = b, err
	r.interim = nil // what serves now was decided, and took the interim session over if it had one
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
func (r *router) closeCurrent() { r.retire(r.currentBackend()) }

// retire ends b's session: when it serves the client, messages wait from
// now on for what serves next.
func (r *router) retire(b transport.Backend) {
	if b == nil {
		return
	}
	r.holdFrom(b)
	if c, ok := b.(interface{ Close() }); ok {
		c.Close()
	}
}

// holdFrom holds the client's messages if b serves it, and reports
// whether it did.
func (r *router) holdFrom(b transport.Backend) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.current != b || r.fail != nil {
		return false
	}
	r.current, r.interim = nil, nil
	close(r.changed)
	r.changed = make(chan struct{})
	return true
}

// lose retires b, which reported g. When b served the client, the node
// hears of it, once, with the session to carry.
func (r *router) lose(b transport.Backend, g *transport.Gone) {
	if r.holdFrom(b) && r.lost != nil {
		r.lost(g)
	}
	r.retire(b)
}

// await waits for a backend (or a failure), and counts a message as being
// answered by the backend returned, in the same critical section that
// chose it, so that settle never misses one.
func (r *router) await(ctx context.Context) (transport.Backend, error) {
	for {
		r.mu.Lock()
		b, err, changed := r.current, r.fail, r.changed
		if err == nil && b != nil {
			r.busy[b]++
		}
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if b != nil {
			return b, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Handle gives msg to the current backend, waiting for one if need be. A
// message that met a bridge leaving its server is answered from what
// serves next.
func (r *router) Handle(ctx context.Context, msg json.RawMessage) []byte {
	b, err := r.claim(ctx, msg)
	if err != nil {
		return transport.Unavailable(msg, err)
	}
	answer, err := relay(ctx, b, msg)
	r.release(b)
	var g *transport.Gone
	if errors.As(err, &g) {
		r.lose(b, g)
		return g.Resend(ctx, r, msg)
	}
	return answer
}

// relay is b's answer to msg, with the *transport.Gone of a bridge that
// left its server.
func relay(ctx context.Context, b transport.Backend, msg json.RawMessage) ([]byte, error) {
	if rl, ok := b.(relayer); ok {
		return rl.Relay(ctx, msg)
	}
	return b.Handle(ctx, msg), nil
}

// release counts b's message as answered, and runs what waited for it.
func (r *router) release(b transport.Backend) {
	r.mu.Lock()
	if r.busy[b]--; r.busy[b] <= 0 {
		delete(r.busy, b)
	}
	if r.eased != nil {
		close(r.eased)
		r.eased = nil
	}
	then := r.answered
	r.answered = nil
	r.mu.Unlock()
	if then != nil {
		then()
	}
}

// afterNextAnswer runs f once the next message has been answered, before
// the answer is written; f must be quick.
func (r *router) afterNextAnswer(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered = f
}

// claim returns the backend to answer msg, counted as busy with it: what
// serves the client now; or, while nothing does, the interim session for
// a message it may answer; or what serves next.
func (r *router) claim(ctx context.Context, msg json.RawMessage) (transport.Backend, error) {
	r.mu.Lock()
	if b := r.current; b != nil && r.fail == nil { // the usual case, at no cost
		r.busy[b]++
		r.mu.Unlock()
		return b, nil
	}
	r.mu.Unlock()
	if r.early != nil {
		if ok, notification := transport.AnsweredEarly(msg); ok {
			return r.awaitEarly(ctx, notification)
		}
	}
	return r.await(ctx)
}

// awaitEarly waits for a backend for a message the interim session may
// answer: a request for patience, after which the interim session is
// opened if need be; a notification only while that session exists, since
// only the session that answered the handshake needs to hear it.
func (r *router) awaitEarly(ctx context.Context, notification bool) (transport.Backend, error) {
	var patience <-chan time.Time
	if !notification {
		t := time.NewTimer(r.patience)
		defer t.Stop()
		patience = t.C
	}
	for {
		r.mu.Lock()
		b, err, changed := r.current, r.fail, r.changed
		if b == nil {
			b = r.interim
		}
		if err == nil && b != nil {
			r.busy[b]++
		}
		r.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if b != nil {
			return b, nil
		}
		select {
		case <-changed:
		case <-patience:
			patience = nil
			if interim := r.early(); interim != nil {
				r.mu.Lock()
				if r.current == nil && r.fail == nil && r.interim == nil {
					r.interim = interim
				}
				r.mu.Unlock()
			}
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// settle waits until b answers no message, or ctx ends. Hold the router
// first, so that none is given to b meanwhile.
func (r *router) settle(ctx context.Context, b transport.Backend) {
	for {
		r.mu.Lock()
		if r.busy[b] == 0 {
			r.mu.Unlock()
			return
		}
		if r.eased == nil {
			r.eased = make(chan struct{})
		}
		eased := r.eased
		r.mu.Unlock()
		select {
		case <-eased:
		case <-ctx.Done():
			return
		}
	}
}
