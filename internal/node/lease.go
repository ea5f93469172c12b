package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"go.uber.org/zap"
)

// Lease is the checkout's lease as a node uses it: the machine's election
// over it, and what the leaseholder's server does with the lease it holds.
type Lease interface {
	machine.Election
	// Path names the lease in log lines and in majordomus_server.
	Path() string
	// Self is this process's identity as it started, which the lease it
	// writes names: the file it runs from may be replaced or removed
	// since (an upgrade), and the fleet registry's row must say what it
	// started as (registration.go).
	Self() (registry.Identity, error)
	// Holding returns the instance of the lease this process holds, and
	// its secret, which its server's clients must know (docs/security.md).
	Holding() (instance, key string, ok bool)
	// Key returns the instance and secret of the lease live was judged
	// from: whether the lease still names its server, and what lets a
	// bridge into that server and checks its proofs; and the connection
	// the server proved itself on, if kept, for the bridge's first message.
	Key(live machine.Observation) (instance, secret string, proven net.Conn)
	// Publish writes the server's URL into the held lease; an error
	// matching registry.ErrLeaseNotOurs says it was taken over meanwhile.
	Publish(url string) error
	// Lost reports once, with the reason, when the lease no longer carries
	// instance (removed, replaced, emptied, corrupted), until ctx ends. An
	// error says why the lease is read every second instead of watched:
	// the channel reports all the same.
	Lost(ctx context.Context, instance string) (<-chan string, error)
	// Ending reports whether the owner of the lease live was judged from
	// has begun to exit: its server will answer nothing.
	Ending(live machine.Observation) bool
	// Carries reads whether the lease still carries instance, and if not,
	// what became of it; cheap enough to ask at every request.
	Carries(instance string) (bool, string)
	// CurrentURL is the URL of the server the lease names now, or "".
	CurrentURL() string
	// Forget drops the lease this process held and lost, touching nothing
	// on disk, so that a later election may create one again.
	Forget()
}

// leaseFile is the [Lease] over the registry's lease file.
type leaseFile struct {
	observer *registry.Observer
	file     *registry.LeaseFile
	// document returns the lease this process writes when it wins: a fresh
	// instance each time, so a server never answers for another's lease.
	document func() registry.Lease
	// signalsHandled is closed once the process handles the termination
	// signals: only then does it create a lease, which it then always
	// removes before it dies. Reading and judging need not wait for it.
	signalsHandled <-chan struct{}
	// self is this process's identity, read as it started (Self).
	self registry.Identity
	// identityErr says why this process's identity cannot be read (an
	// unsupported system): it could write no lease that others could
	// judge, so every attempt finds the lease unusable and the client is
	// served alone with this reason.
	identityErr error
	// carrying is the lease file last found carrying an instance: the same
	// file, size and time carry it still, and are not read again. They are
	// stamped raw (internal/rawio): a relayed message or a request checks
	// them first, and an ordinary system call would wake the runtime's
	// monitor thread for each (B2).
	carrying atomic.Pointer[carrying]
	// judged is what the last attempt read at the lease path: a watch's
	// first report of the same is no change (it would reset alone's
	// backoff each time alone is entered).
	judged atomic.Pointer[registry.Snapshot]
	// first is the reading of the lease begun as the node was built
	// (readSoon), which the first attempt takes.
	first atomic.Pointer[chan observed]
	// proved hears what that reading proved of a live server, if
	// anything, before the first attempt takes it (the client's greeting,
	// greeting.go), once it is set; firstRead is closed then.
	proved    atomic.Pointer[func(proof)]
	firstRead chan struct{}
	gone      atomic.Bool // the checkout was found gone, its lease with it (stillHolds)
	log       *zap.Logger
}

// observed is one reading of the lease, or why it could not be read.
type observed struct {
	o registry.Observation
	// stamp is the lease file's, taken before it was read; nil when it
	// could not be.
	stamp *rawio.Stamp
	err   error
}

type carrying struct {
	instance string
	file     rawio.Stamp
}

// newLeaseFile is the lease of co's profile, judged with times.
func newLeaseFile(co *Checkout, times Timings, signalsHandled <-chan struct{}) *leaseFile {
	self, identityErr := registry.Self()
	if identityErr != nil {
		identityErr = fmt.Errorf("this process's identity cannot be read, so it can write no lease others could judge: %w", identityErr)
	}
	observer := newObserver(co, self.Executable, times)
	observer.KeepProven = true // for the bridge's first message (attach.go)
	return &leaseFile{
		observer: observer,
		file:     &registry.LeaseFile{Path: observer.Path},
		document: func() registry.Lease {
			l := registry.NewLease(self, co.Root, layer.RepositoryID(co.Root), co.Profile, release.Number, time.Now())
			l.RootDir = co.RootID // read as the checkout was found: not again at each acquire
			return l
		},
		signalsHandled: signalsHandled,
		self:           self,
		identityErr:    identityErr,
		log:            co.Logger,
	}
}

// newObserver judges the lease of co's profile as exe judges it, with
// times: what an election and status both read.
func newObserver(co *Checkout, exe registry.Executable, times Timings) *registry.Observer {
	return &registry.Observer{
		Path:       registry.Path(co.Root, co.Profile),
		Profile:    co.Profile,
		Root:       co.Root,
		Executable: exe,
		Version:    release.Number,
		Timings:    registry.Timings{BindGrace: times.BindGrace},
		Probe:      registry.HTTPProbe(times.ProbeTimeout),
	}
}

// untrustedLease is a lease another user could write, or wrote.
type untrustedLease struct{ err error }

func (e *untrustedLease) Error() string { return e.err.Error() }
func (e *untrustedLease) Unwrap() error { return e.err }

// observe reads and judges the lease once. An untrusted one is not read:
// nothing in it is judged, removed or attached to (an *untrustedLease).
func observe(ctx context.Context, o *registry.Observer) (registry.Observation, error) {
	if err := registry.Trusted(o.Path); err != nil {
		return registry.Observation{}, &untrustedLease{err}
	}
	return o.Observe(ctx)
}

func (e *leaseFile) Path() string { return e.file.Path }

// readSoon begins the first attempt's reading of the lease. The machine
// asks for it a millisecond or more later, once the node is built and the
// process has said what it does; the reading, mostly a wait on the lease's
// server, overlaps that (B1). A reading is a moment's either way: what an
// attempt decides from it is checked again when the lease is created or
// taken over, and a bridge fails over from a server that left since.
func (e *leaseFile) readSoon() {
	if e.identityErr != nil {
		return
	}
	ch := make(chan observed, 1)
	e.first.Store(&ch)
	e.firstRead = make(chan struct{})
	go surface.GreetingPrint() // while the reading waits on the server: a greeting compares it
	go func() {
		r := e.readNow(context.Background()) // the probe bounds itself
		if heard := e.proved.Load(); heard != nil {
			var p proof
			if r.o.Verdict.Class == registry.Live && r.o.Identity != nil {
				p = proof{url: r.o.Lease.URLString(), identity: r.o.Identity}
			}
			(*heard)(p)
			// The greeting woke the client's loop and the reading below
			// wakes the attempt; the one woken last runs first, and the
			// attempt would hold the client's answer back (0.1-0.3 ms, B1).
			runtime.Gosched()
		}
		close(e.firstRead)
		ch <- r
	}()
}

// readNow reads and judges the lease once, stamping its file first.
func (e *leaseFile) readNow(ctx context.Context) observed {
	var r observed
	if stamp, err := rawio.Lstat(e.file.Path); err == nil {
		r.stamp = &stamp
	}
	r.o, r.err = observe(ctx, e.observer)
	return r
}

// read is the reading readSoon began, for the first attempt; any other
// attempt reads the lease now.
func (e *leaseFile) read(ctx context.Context) observed {
	first := e.first.Swap(nil)
	if first == nil {
		return e.readNow(ctx)
	}
	select {
	case r := <-*first:
		return r
	case <-ctx.Done():
		go func() { // the server it proved is nobody's now
			if r := <-*first; r.o.Proven != nil {
				r.o.Proven.Close()
			}
		}()
		return observed{err: context.Cause(ctx)}
	}
}

// Attempt reads and judges the lease once, and creates it when there is
// none.
func (e *leaseFile) Attempt(ctx context.Context) machine.Observation {
	if e.identityErr != nil {
		return machine.Observation{Class: machine.ClassUnusable, Reason: e.identityErr.Error()}
	}
	r := e.read(ctx)
	o := r.o
	if r.err != nil {
		return machine.Observation{Class: machine.ClassUnusable, Reason: r.err.Error()}
	}
	e.judged.Store(&o.Snapshot)
	switch {
	case o.Verdict.Class == registry.Absent:
		return e.acquire(ctx)
	case o.Verdict.Class == registry.Live && r.stamp != nil && o.Holds(o.Lease.Instance):
		// what a bridge asks before each message (Carries) is known
		// already: its first message need not read the lease again (B1)
		e.carrying.Store(&carrying{o.Lease.Instance, *r.stamp})
	}
	// The judge's class is the machine's, word for word: nothing maps it.
	obs := machine.Observation{Class: machine.Class(o.Verdict.Class), Reason: detail(o.Verdict), Opaque: o}
	if o.Lease != nil {
		obs.Owner = o.Lease.PID
		obs.URL = o.Lease.URLString() // a busy one's too: its bridge may have found it silent already
	}
	switch o.Verdict.Class {
	case registry.Binding:
		obs.Grace = o.Verdict.Grace // what is left of it, counted from the owner's started_at
	case registry.Live:
		obs.Full = fullIn(o.Identity)
	}
	return obs
}

// fullIn reports whether a server's identity (its probe's, or its report)
// says it is full: it opens no session until one ends.
func fullIn(identity json.RawMessage) bool {
	var server struct{ Full bool }
	return json.Unmarshal(identity, &server) == nil && server.Full
}

// acquire creates the lease with the complete document.
func (e *leaseFile) acquire(ctx context.Context) machine.Observation {
	select {
	case <-e.signalsHandled:
	case <-ctx.Done():
		return machine.Observation{Class: machine.ClassUnusable, Reason: "the election was cancelled"}
	}
	err := e.file.AcquireContext(ctx, e.document())
	switch {
	case errors.Is(err, registry.ErrLeaseExists):
		// another process won between the read and the link: the next
		// attempt finds its lease
		return machine.Observation{Class: machine.ClassOutraced, Reason: "another process created the lease first"}
	case errors.Is(err, registry.ErrLockTimeout):
		// another process is writing the lease, slowly (stopped, say): it
		// is waited for as a lease being bound is, within the election
		// bound, and a client served alone tries again on its turn
		return machine.Observation{Class: machine.ClassBinding, Reason: err.Error(), Contended: true}
	case err != nil:
		return machine.Observation{Class: machine.ClassUnusable, Reason: err.Error()}
	}
	if ctx.Err() != nil { // a cancelled attempt leaves nothing
		_ = e.file.Release()
		return machine.Observation{Class: machine.ClassUnusable, Reason: "the election was cancelled"}
	}
	return machine.Observation{Class: machine.ClassWon}
}

// TakeOver removes the unusable lease judged in obs, and nothing written
// after it was judged. When ctx ends first (the election ended, the
// process is ending) it returns, and the take-over, waiting for the
// sidecar lock, goes on alone to remove nothing: what took the lease over
// is said (machine), and this one is not.
func (e *leaseFile) TakeOver(ctx context.Context, obs machine.Observation) (bool, error) {
	judged, ok := obs.Opaque.(registry.Observation)
	if !ok {
		return false, fmt.Errorf("taking over: no judged lease")
	}
	var removed bool
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		removed, err = e.file.TakeOverUnless(judged, func() bool { return ctx.Err() != nil })
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
	if errors.Is(err, registry.ErrLockTimeout) {
		return false, fmt.Errorf("%w: %v", machine.ErrContended, err)
	}
	return removed, err
}

// Release removes the lease if it is still this process's.
func (e *leaseFile) Release(context.Context) error {
	err := e.file.Release()
	if errors.Is(err, registry.ErrLeaseNotOurs) {
		return nil
	}
	return err
}

func (e *leaseFile) Self() (registry.Identity, error) { return e.self, e.identityErr }

func (e *leaseFile) Holding() (string, string, bool) {
	held, ok := e.file.Held()
	return held.Instance, held.Secret, ok
}

func (e *leaseFile) Key(live machine.Observation) (string, string, net.Conn) {
	if o, ok := live.Opaque.(registry.Observation); ok && o.Lease != nil {
		return o.Lease.Instance, o.Lease.Secret, o.Proven
	}
	return "", "", nil
}

func (e *leaseFile) Ending(live machine.Observation) bool {
	o, ok := live.Opaque.(registry.Observation)
	return ok && e.observer.OwnerEnding(o)
}

func (e *leaseFile) Publish(url string) error { return e.file.Publish(url) }

func (e *leaseFile) Forget() { e.file.Forget() }

func (e *leaseFile) Carries(instance string) (bool, string) {
	stamp, err := rawio.Lstat(e.file.Path)
	if c := e.carrying.Load(); err == nil && c != nil && c.instance == instance && stamp.Same(c.file) {
		return true, ""
	}
	snap := e.current(registry.Read(e.file.Path))
	switch {
	case snap.Found == registry.Unreadable:
		return true, "" // out of descriptors, say: a lease that cannot be read now is not lost
	case !e.stillHolds(snap, instance):
		return false, lossReason(snap)
	case err == nil:
		e.carrying.Store(&carrying{instance, stamp})
	}
	return true, ""
}

func (e *leaseFile) CurrentURL() string {
	if doc, err := registry.Decode(registry.Read(e.file.Path).Raw); err == nil && doc.HasURL() {
		return doc.URLString()
	}
	return ""
}

// detail is a verdict's reason without its leading "<class> lease: ", which
// the machine's log line adds itself.
func detail(v registry.Verdict) string {
	return strings.TrimPrefix(v.Reason, string(v.Class)+" lease: ")
}
