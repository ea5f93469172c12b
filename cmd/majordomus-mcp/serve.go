package main

import (
	"context"
	"os"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// runStdio serves one MCP client on stdio: alone with --standalone, else
// through the checkout's shared server.
func runStdio(ctx context.Context, env *environment) error { return serve(ctx, env, true) }

// runServe runs the checkout's shared server without a stdio client of its
// own, until a signal; if a server already runs, it says where and exits 0.
func runServe(ctx context.Context, env *environment) error { return serve(ctx, env, false) }

// serve runs the process as one node of the checkout's shared server
// (internal/node): it elects, then serves as leaseholder, attaches, or
// serves alone; or, with a client and --standalone, serves it alone: no
// shared server, no port, no lease, nothing written anywhere. A node
// watches its client's parent itself; the signals are handled here.
func serve(ctx context.Context, env *environment, withClient bool) error {
	env.signals = registerSignals() // while the start goes on
	// On the start's path, not beside it: a drop left to a goroutine ran
	// late when processes started in a storm, after the path had faulted
	// in its own pages on top of package initialisation's (B6's peak).
	dropStartPages()
	standalone := withClient && env.opts.standalone
	co, err := env.checkout()
	if err != nil {
		return err // said while the process is starting: the machine never ran
	}
	env.state.Set(string(machine.Electing))
	if standalone {
		env.state.Set("standalone")
	}
	cfg := node.Config{
		Checkout:       co,
		Times:          env.opts.Times,
		HTTPHost:       env.opts.HTTPHost,
		HTTPPort:       env.opts.HTTPPort,
		MaxSessions:    env.opts.MaxSessions,
		Stdout:         env.stdout,
		SignalsHandled: env.signals.ready,
		ShedPages:      dropStartPages, // again once it only bridges
		Logger:         env.log,
		OnTransition:   func(t machine.Transition) { env.state.Set(string(t.To)) },
	}
	if withClient {
		cfg.Stdin = env.stdin
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if standalone {
		env.signals.relay(ctx, func(sig os.Signal) {
			env.log.Info("stopping", zap.String("reason", "received "+signalName(sig)))
			stop()
		})
		err := node.RunStandalone(ctx, cfg)
		env.died = env.signals.first()
		return nodeError(err)
	}
	n, err := node.New(cfg)
	if err != nil {
		return nodeError(err)
	}
	env.signals.relay(ctx, func(sig os.Signal) { n.Signal(signalName(sig)) })
	outcome, err := n.Run(ctx)
	if outcome.Signal != "" {
		env.died = env.signals.first()
	}
	return nodeError(err)
}

// registeredSignals are the signals a serving process handles, registered
// on a goroutine of their own: each registration waits for the runtime's
// signal thread (about a millisecond for all of them on a 2-core virtual
// machine), and the process's start goes on meanwhile.
type registeredSignals struct {
	termination chan os.Signal
	ready       chan struct{}
	received    chan os.Signal // the first relayed, which the process dies of
}

func registerSignals() *registeredSignals {
	r := &registeredSignals{termination: make(chan os.Signal, 4), ready: make(chan struct{}), received: make(chan os.Signal, 1)}
	go func() {
		notifyHandled(r.termination)
		close(r.ready)
	}()
	return r
}

// relay hands each signal to handle, from when the signals are handled
// until ctx ends. They stay caught after, unhandled: the process is
// ending, and dies of the first (dieOf) with its last lines written,
// whatever a second would do by default.
func (r *registeredSignals) relay(ctx context.Context, handle func(os.Signal)) {
	go func() {
		select {
		case <-r.ready:
		case <-ctx.Done():
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-r.termination:
				select {
				case r.received <- sig:
				default:
				}
				handle(sig)
			}
		}
	}()
}

// first is the first signal relayed, or nil.
func (r *registeredSignals) first() os.Signal {
	select {
	case sig := <-r.received:
		return sig
	default:
		return nil
	}
}
