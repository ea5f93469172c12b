package machine

import (
	"context"
	"time"
)

// The ports are the machine's only way to act on the world. They are declared
// here, where they are used, and implemented elsewhere (internal/node, over
// registry and transport), without importing this package's internals.
//
// Threading, for every port: a method documented "loop" is called on the
// goroutine running [Machine.Run] and must return quickly; a method
// documented "own goroutine" runs on a goroutine the machine starts for it,
// may block, and must return promptly once its ctx is done, because Run waits
// for it before returning. Ports report later facts through the Machine's
// input methods, which never block.

// Observation is what one election attempt found.
type Observation struct {
	// Class is the judgement; an unknown class is treated as unusable.
	Class Class
	// Reason explains the judgement for the log, without the class:
	// "not JSON (invalid character 'x')". For ClassUnusable it is why the
	// lease cannot be used: "creating it: permission denied".
	Reason string
	// URL is the URL the lease names, when it names one: the live
	// server's with ClassLive, the silent one's with ClassBusy.
	URL string
	// Owner is the pid of the process the lease names, 0 when it names
	// none: whom a waiting election (binding, busy) waits for.
	Owner int
	// Full is, for ClassLive, that the server's own identity said it has
	// no room for another session: a try from alone does not attach to it.
	Full bool
	// Grace is, for ClassBinding, how much longer the lease stays binding
	// before it counts as abandoned; 0 when unknown.
	Grace time.Duration
	// Opaque is whatever TakeOver needs to replace exactly the lease that was
	// judged, and nothing written after; the machine never looks inside.
	Opaque any
	// Contended: nothing was judged, another process holding the lease's
	// lock through the whole wait (ClassBinding: waited for as a lease being
	// written). A busy run it comes within goes on.
	Contended bool
}

// Election reads, judges, creates and replaces the lease.
type Election interface {
	// Attempt reads and judges the lease once, creating it when there is
	// none, and says what it found. Own goroutine: it may probe a server for
	// seconds. When ctx is done it returns at once, and a lease it created by
	// then is removed before it returns: a cancelled attempt leaves nothing.
	Attempt(ctx context.Context) Observation
	// TakeOver replaces the unusable lease judged in obs, in a critical
	// section that two racing processes cannot both win and that never
	// removes a lease written after obs was judged, and reports whether it
	// removed it. Loop; fast (no network). Losing the race is not an error:
	// the next attempt sees the winner. [ErrContended] says another process
	// held the critical section for longer than it waits: the machine says
	// so and looks again. Any other error means the lease cannot be
	// replaced at all, and the machine then serves alone.
	TakeOver(ctx context.Context, obs Observation) (removed bool, err error)
	// Release removes the lease if it still carries this process's instance.
	// Loop; fast. Only a leaseholder calls it, never after the lease was
	// lost — and the machine, for an attempt that reported "won" too late to
	// count (the client left, a signal came, or the election timed out while
	// it was linking the lease), so that no lease outlives its reason.
	Release(ctx context.Context) error
	// Watch reports changes of the lease (a file written, renamed, removed)
	// on the channel it returns, until ctx ends; the machine watches while
	// it elects, so that a waiting election attempts again at once rather
	// than at its next poll. An error (no lease directory yet) leaves the
	// election to its poll. Loop; the channel is read by a goroutine of the
	// machine's.
	Watch(ctx context.Context) (<-chan struct{}, error)
}

// Server is the shared server this process runs as leaseholder. It also
// serves this process's own stdio client, including a session carried over
// from a failed bridge.
type Server interface {
	// Start binds, serves and publishes the URL in the lease, and returns
	// once serving (nil) or failed (having undone what it did). A bind to a
	// non-loopback address is served with a warning naming what it exposes
	// (R7). Own goroutine; ctx bounds the start only. Session counts are
	// reported only after Start returned nil.
	Start(ctx context.Context) error
	// LoseLease switches the server, irreversibly, to lease-lost: it says
	// leaseholder false, refuses new initialize with the reason, and never
	// touches the lease again. Its sessions continue; its own client is
	// handed over next ([Server.HandOver]) if it is still here. Loop.
	LoseLease(reason string)
	// Stop shuts the server down within ctx. It may be called while Start is
	// still running (whose ctx is then already done). Loop.
	Stop(ctx context.Context) error
	// HandOver keeps, within ctx, a lease-lost server's own client's session
	// (its messages wait) to be carried onto whatever the election that
	// follows gives: the current server, or a new one of this process's.
	// The server serves its other sessions until the last ends, then stops,
	// without the machine: their count is no longer reported. Loop.
	HandOver(ctx context.Context) error
}

// Bridge relays this process's stdio to a shared server another process
// runs.
type Bridge interface {
	// Attach starts bridging to the live server the observation names (its
	// URL; its Opaque says what else the port needs to be let in) and
	// returns at once; ctx ends with the machine. Later failures come back
	// through [Machine.BridgeFailedWith] (saying a server is full or was
	// silent, or that the client is still served alone), and
	// only for a message that could not be delivered, so a failing server
	// costs one election per client message, never a loop. Loop.
	Attach(ctx context.Context, live Observation)
	// Stop detaches from the server; the client's pending message and
	// session stay with the caller, to be carried to whatever serves next.
	// After Stop returns the bridge reports nothing more. Loop.
	Stop()
}

// Standalone serves this process's client without sharing, in state alone.
type Standalone interface {
	// Serve starts serving the client in-process, exactly as --standalone
	// would, and returns at once; it serves until ctx is done, which is when
	// the machine ends. reason is why sharing failed, already logged. An
	// error means even that is impossible; the machine logs it and stays,
	// and the caller answers the client's requests with the error. Loop.
	Serve(ctx context.Context, reason string) error
}
