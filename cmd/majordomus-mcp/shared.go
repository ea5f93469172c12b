package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"go.uber.org/zap"

	"majordomus-mcp/internal/release"
	"majordomus-mcp/layer"
	"majordomus-mcp/machine"
	"majordomus-mcp/registry"
	"majordomus-mcp/transport"
)

// timings are the durations of SPEC §5.1: the defaults, then the
// manifest's server section, then the flags (for tests).
type timings struct {
	bindGrace, probeTimeout, electionBound, busyGrace, idleTimeout, heartbeat time.Duration
}

func resolveTimings(m layer.Timings, flags timings) timings {
	pick := func(def, manifest, flag time.Duration) time.Duration {
		switch {
		case flag > 0:
			return flag
		case manifest > 0:
			return manifest
		}
		return def
	}
	// Each default is the one its owner declares, never a copy.
	return timings{
		bindGrace:     pick(registry.DefaultBindGrace, m.BindGrace, flags.bindGrace),
		probeTimeout:  pick(registry.DefaultProbeTimeout, m.ProbeTimeout, flags.probeTimeout),
		electionBound: pick(machine.DefaultElectionBound, m.ElectionBound, flags.electionBound),
		busyGrace:     pick(machine.DefaultBusyGrace, m.BusyGrace, flags.busyGrace),
		idleTimeout:   pick(transport.DefaultIdleTimeout, m.SessionIdleTimeout, flags.idleTimeout),
		heartbeat:     pick(transport.DefaultHeartbeat, m.BridgeHeartbeat, flags.heartbeat),
	}
}

// bridgeGCPercent is the GOGC of a process while it only bridges.
const bridgeGCPercent = 25

// node is one process of the shared-server design: the state machine and
// the ports it acts through. withClient is false for `serve`, which runs
// the shared server without a stdio client of its own.
type node struct {
	env        *environment
	co         *checkout
	process    *processInfo
	times      timings
	leasePath  string
	withClient bool

	out    *transport.FrameWriter
	router *router
	m      *machine.Machine

	mu         sync.Mutex
	carried    *transport.Carried // the client's session, once a bridge failed
	causes     []string           // why the last bridge failed
	everServed bool               // a backend has served the client
	fatal      error              // nothing could ever serve the client: the exit error
	abandon    context.CancelCauseFunc
	life       context.Context // ends when the machine has run
}

// serveShared runs the process as one node of the checkout's shared
// server: it elects, then serves as leaseholder, attaches, or serves alone.
func serveShared(ctx context.Context, env *environment, withClient bool) error {
	env.state.Set(string(machine.Electing))
	if err := registry.ValidateProfile(env.opts.profile); err != nil {
		return usageError("--profile: %v", err)
	}
	process := newProcessInfo(string(machine.Electing), "", env.opts.profile)
	co, err := findCheckout(env, process)
	if err != nil {
		return err
	}
	n := &node{
		env:        env,
		co:         co,
		process:    process,
		times:      resolveTimings(co.manifest.Server, env.opts.times),
		leasePath:  registry.Path(co.root, env.opts.profile),
		withClient: withClient,
		out:        transport.NewFrameWriter(env.stdout),
		router:     newRouter(),
	}
	process.leasePath = n.leasePath
	self, identityErr := registry.Self()
	if identityErr != nil {
		identityErr = fmt.Errorf("this process's identity cannot be read, so it can write no lease others could judge: %w", identityErr)
	}
	lease := &registry.LeaseFile{Path: n.leasePath}
	repositoryID := layer.RepositoryID(co.root)
	el := &election{
		observer: &registry.Observer{
			Path:         n.leasePath,
			RepositoryID: repositoryID,
			Executable:   self.Executable,
			Version:      release.Number,
			Timings:      registry.Timings{BindGrace: n.times.bindGrace},
			Probe:        registry.HTTPProbe(n.times.probeTimeout),
		},
		file: lease,
		document: func() registry.Lease {
			return registry.NewLease(self, co.root, repositoryID, env.opts.profile, release.Number, time.Now())
		},
		signalsHandled: env.signals.ready,
		identityErr:    identityErr,
	}
	n.m, err = machine.New(machine.Config{
		Election:      el,
		Server:        &sharedServer{node: n, lease: lease},
		Bridge:        &attachment{node: n},
		Standalone:    &aloneServer{node: n},
		LeasePath:     n.leasePath,
		ElectionBound: n.times.electionBound,
		BusyGrace:     n.times.busyGrace,
		Logger:        env.log,
		OnTransition:  n.transitioned,
	})
	if err != nil {
		return withCode(exitInternal, err)
	}

	runCtx, abandon := context.WithCancelCause(ctx)
	defer abandon(nil)
	n.abandon, n.life = abandon, runCtx
	loopCtx, stopLoop := context.WithCancel(ctx)
	defer stopLoop()
	events := watchClient(runCtx, env)
	if withClient {
		go n.serveClient(loopCtx)
	}
	var died os.Signal
	go func() {
		for ev := range events {
			if ev.signal == nil {
				env.log.Info("the client left", zap.String("reason", ev.reason))
				n.router.closeCurrent() // its session leaves the board
				n.m.ClientLeft()
				continue
			}
			n.mu.Lock()
			if died == nil {
				died = ev.signal
			}
			n.mu.Unlock()
			n.m.Signal(signalName(ev.signal))
		}
	}()

	outcome := n.m.Run(runCtx)
	stopLoop()
	n.mu.Lock()
	defer n.mu.Unlock()
	if outcome.Signal != "" {
		env.died = died
	}
	return n.fatal
}

// serveClient runs the stdio loop; its end is the client leaving.
func (n *node) serveClient(ctx context.Context) {
	n.env.signals.wait() // SIGPIPE is handled before the loop writes
	loop := transport.Stdio{In: n.env.stdin, Out: n.out, Backend: n.router, Logger: n.env.log}
	ending := loop.Serve(ctx)
	if ending == transport.Cancelled {
		return
	}
	n.router.closeCurrent()
	n.m.ClientLeft()
}

// transitioned keeps the log's state and the server report in step with
// the machine.
func (n *node) transitioned(t machine.Transition) {
	n.env.state.Set(string(t.To))
	n.process.setRole(string(t.To))
	switch t.To {
	case machine.Attached:
		// A bridge holds little but relays a lot: collect its garbage
		// sooner, so that every agent's bridge stays small (B6). The
		// collection this starts waits for the client's first answer,
		// so that attaching is not slowed by it (B1).
		n.router.afterNextAnswer(func() {
			if n.env.state.Get() == string(machine.Attached) {
				debug.SetGCPercent(bridgeGCPercent)
			}
		})
	case machine.Leaseholder, machine.Alone:
		debug.SetGCPercent(100)
	}
	if t.To == machine.LeaseLost && !n.withClient {
		n.m.ClientLeft() // `serve` has no client of its own to wait for
	}
}

// carriedSession returns the client's session to carry onto a new backend.
func (n *node) carriedSession() *transport.Carried {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.carried
}

// serve makes b serve the client, carrying its session when a bridge
// failed. announced (when not nil) runs once the session is carried and
// before b answers anything: what it logs is true before the client sees
// an answer from b.
func (n *node) serve(ctx context.Context, b transport.Backend, announced func(carried bool)) error {
	c := n.carriedSession()
	if c != nil {
		if err := c.Replay(ctx, b); err != nil {
			return fmt.Errorf("carrying the client's session: %w", err)
		}
	}
	if announced != nil {
		announced(c != nil)
	}
	n.mu.Lock()
	n.everServed = true
	n.mu.Unlock()
	n.router.set(b)
	return nil
}

// failover is called by a bridge whose server is gone: the machine elects
// again, and whatever serves next is returned with the session carried.
func (n *node) failover(ctx context.Context, cause error, carried transport.Carried) (transport.Backend, error) {
	n.mu.Lock()
	n.carried = &carried
	n.causes = []string{cause.Error()}
	n.mu.Unlock()
	old := n.router.currentBackend()
	n.router.hold()
	n.m.BridgeFailed(cause.Error())
	return n.router.next(ctx, old)
}

// unservable records that nothing can serve the client: a client that was
// never served ends the process with the error's exit code (the layer's
// errors keep their codes); a client that was served (its bridge failed)
// gets "shared server unavailable" with every reason, and its stdio stays
// open.
func (n *node) unservable(err error) {
	n.mu.Lock()
	served := n.everServed
	reasons := append(append([]string(nil), n.causes...), err.Error())
	n.mu.Unlock()
	if !served || !n.withClient {
		n.mu.Lock()
		n.fatal = err
		n.mu.Unlock()
		n.abandon(err)
		return
	}
	n.router.failed(errors.New(joinReasons(reasons)))
}

func joinReasons(reasons []string) string {
	out := ""
	for i, r := range reasons {
		if i > 0 {
			out += "; and "
		}
		out += r
	}
	return out
}

// runServe runs the checkout's shared server without a stdio client of its
// own, until a signal; if a server already runs, it says where and exits 0.
func runServe(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("serve takes no arguments")
	}
	env.signals = registerSignals() // while the start goes on
	return serveShared(ctx, env, false)
}
