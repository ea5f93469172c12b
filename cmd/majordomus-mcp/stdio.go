package main

import (
	"context"
	"os"
	"os/signal"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// runStdio serves one MCP client on stdio: alone with --standalone, else
// through the checkout's shared server (see shared.go).
func runStdio(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("unexpected argument %q", args[0])
	}
	env.signals = registerSignals() // while the start goes on
	if env.opts.standalone {
		return serveStandalone(ctx, env)
	}
	return serveShared(ctx, env, true)
}

// serveStandalone serves the client alone: no shared server, no port, no
// lease, nothing written anywhere.
func serveStandalone(ctx context.Context, env *environment) error {
	env.state.Set("standalone")
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	died := make(chan os.Signal, 1)
	go func() {
		if ev, ok := <-watchClient(ctx, env, true); ok {
			env.log.Info("stopping", zap.String("reason", ev.reason))
			died <- ev.signal
			cancel()
		}
	}()
	err = node.RunStandalone(ctx, node.Config{
		Checkout:       co,
		Times:          env.opts.times,
		Stdin:          env.stdin,
		Stdout:         env.stdout,
		SignalsHandled: env.signals.ready,
		Logger:         env.log,
	})
	select {
	case env.died = <-died:
	default:
	}
	return nodeError(err)
}

// clientEvent is something that ends a client's session from outside the
// stdio loop: a signal, or the death of the parent process.
type clientEvent struct {
	signal os.Signal // nil when the parent died
	reason string
}

// watchClient reports the termination signals and, when the process
// serves a stdio client, the death of the parent process (a host killed
// hard leaves its children reparented with stdin still open) until ctx
// ends, then closes the channel. Without a client (serve) the parent is
// not watched: such a process runs until a signal, whatever started it.
func watchClient(ctx context.Context, env *environment, withClient bool) <-chan clientEvent {
	events := make(chan clientEvent, 4)
	registered := env.signals    // registerSignals ran when the command began
	var parentGone <-chan string // nil: never reported
	if withClient {
		parentGone = node.ParentGone(ctx)
	}
	go func() {
		defer close(events) // its readers end with it
		var signals chan os.Signal
		select {
		case <-registered.ready:
			signals = registered.termination
			defer signal.Stop(signals)
		case <-ctx.Done():
			return
		}
		send := func(ev clientEvent) {
			select {
			case events <- ev:
			case <-ctx.Done():
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case sig := <-signals:
				send(clientEvent{signal: sig, reason: "received " + signalName(sig)})
			case reason := <-parentGone:
				parentGone = nil // reported once
				send(clientEvent{reason: reason})
			}
		}
	}()
	return events
}

// registeredSignals are the signals a serving process handles, registered
// on a goroutine of their own: each registration waits for the runtime's
// signal thread (about a millisecond for all of them on a 2-core virtual
// machine), and the process's start goes on meanwhile.
type registeredSignals struct {
	termination chan os.Signal
	ready       chan struct{}
}

func registerSignals() *registeredSignals {
	r := &registeredSignals{termination: make(chan os.Signal, 4), ready: make(chan struct{})}
	go func() {
		notifyHandled(r.termination)
		close(r.ready)
	}()
	return r
}
