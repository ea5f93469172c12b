package node

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Config is what a node needs from its command.
type Config struct {
	Checkout *Checkout
	// Times are the timings the flags set: a zero one takes the
	// manifest's, else the default ([ResolveTimings]). They are checked as
	// a whole: New refuses timings that cannot work together.
	Times Timings
	// HTTPHost and HTTPPort are where a leaseholder binds (port 0: any).
	HTTPHost string
	HTTPPort int
	// MaxSessions caps the leaseholder's HTTP sessions; 0 means the
	// transport's default.
	MaxSessions int
	// Stdin and Stdout are the client's stdio. Without a client (Stdin nil:
	// `serve`) the node runs the shared server for others only. Pipes and
	// sockets (*os.File) are used through descriptors of their own, read
	// and written raw (ownStdio).
	Stdin  io.Reader
	Stdout io.Writer
	// SignalsHandled is closed once the process handles termination
	// signals: no lease is created and no frame written before.
	SignalsHandled <-chan struct{}
	// Lease is the lease port; nil means the lease file of the checkout's
	// profile.
	Lease  Lease
	Logger *zap.Logger
	// OnTransition, when set, hears of every change of state (the log's
	// state is set from it). Loop goroutine: it must be quick.
	OnTransition func(machine.Transition)
	// ShedPages, when set, takes the binary's pages out of the resident
	// set; a bridge calls it as it tunes the runtime for bridging
	// (tuning.go).
	ShedPages func()
}

// Node is one process of the shared-server design: the state machine and
// the ports it acts through.
type Node struct {
	cfg        Config
	co         *Checkout
	log        *zap.Logger
	lease      Lease
	withClient bool
	host       string          // this process's host (hostKey), "" when unknown
	hostPeer   func() string   // its client's peer id as its host's, drawn once (drawHostPeer)
	drawing    sync.Once       // drawSoon
	firstRead  <-chan struct{} // closed once the lease's first reading greeted the client, or not (greeting.go)

	out     *wire.FrameWriter
	session *clientSession
	m       *machine.Machine
	server  *sharedServer
	url     atomic.Pointer[string] // the server this process serves or bridges to

	tuning runtimeTuning // the runtime's settings for what the process is

	signal    atomic.Pointer[string] // the first termination signal, once one came
	signalled chan struct{}          // closed as it came

	mu      sync.Mutex // guards the process's life
	fatal   error      // nothing could ever serve the client: the exit error
	abandon context.CancelCauseFunc
	life    context.Context // ends when the machine has run
}

// New builds a node in electing.
func New(cfg Config) (*Node, error) {
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	if cfg.SignalsHandled == nil {
		ready := make(chan struct{})
		close(ready)
		cfg.SignalsHandled = ready
	}
	times, err := ResolveTimings(cfg.Checkout.Manifest.Server, cfg.Times)
	if err != nil {
		return nil, err
	}
	cfg.Times = times
	ownStdio(&cfg)
	if cfg.Lease == nil {
		lease := newLeaseFile(cfg.Checkout, cfg.Times, cfg.SignalsHandled)
		lease.readSoon()
		cfg.Lease = lease
	}
	leasePath := registry.Path(cfg.Checkout.Root, cfg.Checkout.Profile)
	var counterFailed atomic.Bool
	cfg.Checkout.peerNumbers = func(atLeast int) (int, error) {
		n, err := registry.NextPeer(leasePath, atLeast)
		if err != nil && !counterFailed.Swap(true) { // said once: every new peer would say it again
			cfg.Logger.Warn("the checkout's peer counter cannot be used; this process numbers its peers itself, and may give an id given before",
				zap.String("counter", registry.PeerCounterPath(leasePath)), zap.Error(err))
		}
		return n, err
	}
	n := &Node{
		cfg:        cfg,
		co:         cfg.Checkout,
		log:        cfg.Logger,
		lease:      cfg.Lease,
		withClient: cfg.Stdin != nil,
		host:       hostKey(),
		tuning:     runtimeTuning{procs: runtime.GOMAXPROCS(0), shed: cfg.ShedPages},
		signalled:  make(chan struct{}),
	}
	n.hostPeer = sync.OnceValue(n.drawHostPeer)
	n.server = &sharedServer{node: n}
	if cfg.Stdout != nil {
		n.out = wire.NewFrameWriter(cfg.Stdout)
	}
	n.setURL("")
	m, err := machine.New(machine.Config{
		Election:      n.lease,
		Server:        n.server,
		Bridge:        &attachment{node: n},
		Standalone:    &aloneServer{node: n},
		Headless:      !n.withClient,
		LeasePath:     n.lease.Path(),
		ElectionBound: cfg.Times.ElectionBound,
		BusyGrace:     cfg.Times.BusyGrace,
		JoinRetry:     cfg.Times.JoinRetry,
		Logger:        cfg.Logger,
		OnTransition:  n.transitioned,
	})
	if err != nil {
		return nil, fmt.Errorf("building the state machine: %w", err)
	}
	n.m = m
	// Within the probe timeout whatever the lease holds, with time left for
	// the layer to load; an election that ends sooner answers everything
	// itself.
	n.session = newClientSession(n, m, earlyPatience)
	if lease, ok := cfg.Lease.(*leaseFile); ok && n.withClient && lease.firstRead != nil {
		greet := n.session.greet
		lease.proved.Store(&greet)
		n.firstRead = lease.firstRead
	}
	return n, nil
}

// Run elects, then serves as leaseholder, attaches, or serves alone, until
// the machine exits. Its error is why nothing could ever serve the client
// (nil otherwise); the outcome says how the machine ended.
func (n *Node) Run(ctx context.Context) (machine.Outcome, error) {
	runCtx, abandon := context.WithCancelCause(ctx)
	defer abandon(nil)
	n.mu.Lock()
	n.abandon, n.life = abandon, runCtx
	n.mu.Unlock()
	n.sayFirst()
	loopCtx, stopLoop := context.WithCancelCause(ctx)
	defer stopLoop(nil)
	served := make(chan struct{})
	if n.withClient {
		n.drawSoon()
		go func() {
			defer close(served)
			n.serveClient(loopCtx)
		}()
		go onParentGone(loopCtx, n.log, n.ClientLeft)
	}
	outcome := n.m.Run(runCtx)
	stopLoop(n.ending(outcome)) // what still waits is told why
	if n.withClient && outcome.Signal == "" {
		// and the process ends once that is written: a probe timeout at
		// most, should the client not read it; a signal ends it at once
		t := time.NewTimer(n.cfg.Times.ProbeTimeout)
		select {
		case <-served:
		case <-t.C:
		case <-n.signalled:
		}
		t.Stop()
	}
	// A lease-lost server whose client was handed over ends with its
	// sessions, as the process does (R6); a signal ends it now. Every row
	// removal (deregister) has ended by then too.
	n.server.drains.Wait()
	if sig := n.signal.Load(); outcome.Signal == "" && sig != nil {
		outcome.Signal, outcome.Reason = *sig, "signal "+*sig
	}
	abandon(nil)
	n.co.unwatched()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fatal == nil && outcome.Failure != "" {
		return outcome, errors.New(outcome.Reason)
	}
	return outcome, n.fatal
}

// ending is why the client is served no more once the machine has run:
// what could never serve it, else how the machine ended.
func (n *Node) ending(o machine.Outcome) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fatal != nil {
		return n.fatal
	}
	return fmt.Errorf("this process is ending: %s", cmp.Or(o.Reason, "its client left"))
}

// sayFirst is the process's first log line: what it does before any
// probe, so that a host that gives up within a second leaves a log that
// says why.
func (n *Node) sayFirst() {
	what := "looking for the checkout's shared server: reading the lease at " + n.lease.Path() +
		"; a live server there is attached to, none there is started here"
	if n.withClient {
		what += fmt.Sprintf("; while the lease's owner binds or does not answer, this client's handshake and the layer's lists and reads are answered here after %s, and what needs the board waits for the election (at most %s)",
			n.session.patience, n.cfg.Times.ElectionBound)
	}
	n.log.Info(what, zap.String("lease", n.lease.Path()))
}

// ClientLeft reports that the client left other than by closing stdin
// (its parent died); its session leaves the board.
func (n *Node) ClientLeft() {
	n.session.end()
	n.m.ClientLeft()
}

// Signal reports a termination signal, by name. It also ends at once the
// lease-lost servers left serving their sessions, which Run may be waiting
// for after the machine has ended: the process then ends of the signal.
func (n *Node) Signal(name string) {
	if n.signal.CompareAndSwap(nil, &name) {
		close(n.signalled)
	}
	n.m.Signal(name)
	go n.server.cutDrains() // each waits for its calls under way, within the stop grace
}

// State is the node's state, read from its machine.
func (n *Node) State() machine.State { return n.m.State() }

// serveClient runs the stdio loop; its end is the client leaving.
func (n *Node) serveClient(ctx context.Context) {
	select { // SIGPIPE is handled before the loop writes
	case <-n.cfg.SignalsHandled:
	case <-ctx.Done():
		return
	}
	loop := stdio.Loop{In: n.cfg.Stdin, Out: n.out, Backend: n.session, Logger: n.log}
	if loop.Serve(ctx) == stdio.Cancelled {
		return
	}
	n.ClientLeft()
}

// ownStdio reads and writes the client's stdio, when they are pipes or
// sockets, through descriptors of their own with raw system calls (internal/rawio):
// a relayed message then wakes none of the runtime's threads but the one
// that reads it (B2).
func ownStdio(cfg *Config) {
	if f, ok := cfg.Stdin.(*os.File); ok {
		cfg.Stdin = rawio.Own(f)
	}
	if f, ok := cfg.Stdout.(*os.File); ok {
		cfg.Stdout = rawio.Own(f)
	}
}

// transitioned makes what follows a change of state that the graph does
// not show: the runtime's settings (tuning.go).
func (n *Node) transitioned(t machine.Transition) {
	if n.cfg.OnTransition != nil {
		n.cfg.OnTransition(t)
	}
	n.tuning.became(t.To)
	switch t.To {
	case machine.Electing:
		n.setURL("")
	case machine.Attached:
		if n.out != nil {
			n.out.AfterWritten(func() { go n.tuning.bridging() })
		}
	}
}

func (n *Node) setURL(url string) { n.url.Store(&url) }

// describe is what this process says of itself in majordomus_server.
func (n *Node) describe() surface.Process {
	state := n.m.State()
	d := describeAs(string(state), *n.url.Load(), n.lease.Path(), n.co.Profile)
	// served alone until a server takes the client, whatever a try to share
	// passes through meanwhile (it wins the lease before its server starts)
	if reason := n.session.aloneBecause(); reason != nil {
		d.Alone = *reason
	}
	d.HTTPSessions = n.server.httpSessions()
	return d
}

// load builds the served layer for the process's lifetime.
func (n *Node) load() (*served, error) {
	return n.co.load(n.lifetime(), n.describe, n.cfg.Times.IdleTimeout)
}

// lifetime ends when the machine has run.
func (n *Node) lifetime() context.Context {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.life
}

// unservable records that nothing can serve the client: a client that was
// never served ends the process with the error (the layer's errors kept,
// for the command's exit code); a client that was served (its bridge
// failed) gets "shared server unavailable" with every reason, and its
// stdio stays open.
func (n *Node) unservable(err error) {
	if n.session.unservable(err) {
		return
	}
	n.mu.Lock()
	n.fatal = err
	abandon := n.abandon
	n.mu.Unlock()
	abandon(err)
}

// unloaded is err, the layer's, which a process without a client ends
// with, for its exit code (10 under --strict).
func (n *Node) unloaded(err error) error {
	if !n.withClient {
		n.mu.Lock()
		n.fatal = cmp.Or(n.fatal, err)
		n.mu.Unlock()
	}
	return err
}
