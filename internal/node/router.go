package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// router holds what serves the client now, for the client's session
// (client.go), which alone sets and retires it: the in-process session of
// a leaseholder or of a process served alone, or a bridge. Messages wait
// while nothing does (the process is electing). It is the one place that
// closes a backend. The loop, not the backend, owns stdin and stdout, so
// the backend can change under it.
type router struct {
	mu      sync.Mutex
	current wire.Backend
	fail    error         // set when nothing can serve the client
	changed chan struct{} // closed and replaced whenever current or fail changes
	// busy counts the messages each backend is answering, but listens,
	// which last as long as their client wants and move on with the
	// client (stdio.ErrMoved, bridge.Gone); eased, made while settle
	// waits, is closed when a count falls.
	busy  map[wire.Backend]int
	eased chan struct{}
	// interim answers what is the same in every mode (stdio.AnsweredEarly)
	// until anything was decided: offered later, it would answer what the
	// session carried onto the bridge never saw.
	interim wire.Backend
	decided bool
}

// errPatient says a message that the interim session may answer waited
// its patience with nothing to answer it.
var errPatient = errors.New("waited for the election")

// relayer is a backend that can report that it left its server (a
// bridge: its answers come with a *bridge.Gone error then) or that its
// listen goes on with what serves next (the in-process session,
// stdio.ErrMoved).
type relayer interface {
	Relay(ctx context.Context, msg json.RawMessage) ([]byte, error)
}

func newRouter() *router {
	return &router{changed: make(chan struct{}), busy: map[wire.Backend]int{}}
}

// set makes b serve every message from now on.
func (r *router) set(b wire.Backend) { r.update(b, nil) }

// failed answers every request from now on with err.
func (r *router) failed(err error) { r.update(nil, err) }

// hold makes messages wait until a new backend is set.
func (r *router) hold() { r.update(nil, nil) }

func (r *router) update(b wire.Backend, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current, r.fail = b, err
	r.interim, r.decided = nil, true // what serves now took the interim session over if it had one
	close(r.changed)
	r.changed = make(chan struct{})
}

// currentBackend returns what serves the client now, or nil.
func (r *router) currentBackend() wire.Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current
}

// retire ends b's session: when it serves the client, messages wait from
// now on for what serves next.
func (r *router) retire(b wire.Backend) {
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
func (r *router) holdFrom(b wire.Backend) bool {
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

// answers reports whether b serves the client now, or answers for it
// while nothing does (the interim session).
func (r *router) answers(b wire.Backend) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current == b || r.current == nil && r.fail == nil && r.interim == b
}

// relay is b's answer to msg, b then released from it, or why b did not
// answer: see relayer.
func (r *router) relay(ctx context.Context, b wire.Backend, msg json.RawMessage) ([]byte, error) {
	if !listens(msg) {
		defer r.release(b)
	}
	if rl, ok := b.(relayer); ok {
		return rl.Relay(ctx, msg)
	}
	return b.Handle(ctx, msg), nil
}

// release counts b's message as answered.
func (r *router) release(b wire.Backend) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy[b]--; r.busy[b] <= 0 {
		delete(r.busy, b)
	}
	if r.eased != nil {
		close(r.eased)
		r.eased = nil
	}
}

// claim returns the backend to answer msg, counted as busy with it: what
// serves the client now, or, while nothing does, what serves next. A
// message the interim session may answer takes it, once there is one: a
// notification at once, a request after patience (0: never), when
// errPatient says to offer one.
func (r *router) claim(ctx context.Context, msg json.RawMessage, patience time.Duration) (wire.Backend, error) {
	r.mu.Lock()
	waits := r.current == nil && r.fail == nil
	r.mu.Unlock()
	interim, notification := false, false
	if waits && patience > 0 {
		interim, notification = stdio.AnsweredEarly(msg)
	}
	var waited <-chan time.Time
	if interim && !notification {
		t := time.NewTimer(patience)
		defer t.Stop()
		waited = t.C
	}
	return r.await(ctx, msg, interim, waited)
}

// serving reports whether something serves the client now, or failed to:
// a message claimed now is given to it at once.
func (r *router) serving() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.current != nil || r.fail != nil
}

// listens reports whether msg is a subscriptions/listen.
func listens(msg json.RawMessage) bool { return wire.IsMethod(msg, mcp.MethodSubscriptionsListen) }

// await waits for a backend (or a failure), or for the interim session
// when interim allows it, until patience. It counts a message as being
// answered by the backend returned, in the same critical section that
// chose it, so that settle never misses one.
func (r *router) await(ctx context.Context, msg json.RawMessage, interim bool, patience <-chan time.Time) (wire.Backend, error) {
	for {
		r.mu.Lock()
		b, err, changed := r.current, r.fail, r.changed
		if b == nil && interim {
			b = r.interim
		}
		if err == nil && b != nil && !listens(msg) {
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
			return nil, errPatient
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// offer makes interim (when not nil) answer what it may while nothing
// was ever decided to serve the client.
func (r *router) offer(interim wire.Backend) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.decided && r.interim == nil {
		r.interim = interim
	}
}

// settle waits until b answers no message, or ctx ends. Hold the router
// first, so that none is given to b meanwhile.
func (r *router) settle(ctx context.Context, b wire.Backend) {
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
