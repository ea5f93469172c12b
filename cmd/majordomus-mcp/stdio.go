package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"go.uber.org/zap"

	"majordomus-mcp/registry/proc"
	"majordomus-mcp/transport"
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
	process := newProcessInfo("standalone", "", env.opts.profile)
	co, err := findCheckout(env, process)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	srv, err := co.load(ctx)
	if err != nil {
		return err
	}
	ix := srv.layer.Current()
	env.log.Info("standalone: serving this client alone; no shared server, no HTTP port, no lease",
		zap.String("checkout", ix.Name), zap.Int("objects", len(ix.Objects)), zap.String("index_state", ix.State()))

	out := transport.NewFrameWriter(env.stdout)
	local, err := transport.NewLocal(ctx, srv.surface.MCP, out, "stdio")
	if err != nil {
		return withCode(exitInternal, err)
	}
	defer local.Close()

	events := watchClient(ctx, env)
	env.signals.wait() // SIGPIPE is handled before the loop writes
	loop := transport.Stdio{In: env.stdin, Out: out, Backend: local, Logger: env.log}
	ended := make(chan transport.Ending, 1)
	go func() { ended <- loop.Serve(ctx) }()
	select {
	case <-ended:
		return nil
	case ev, ok := <-events:
		if !ok {
			<-ended
			return nil
		}
		env.log.Info("stopping", zap.String("reason", ev.reason))
		env.died = ev.signal
		cancel(fmt.Errorf("%s", ev.reason))
		<-ended
		return nil
	}
}

// clientEvent is something that ends a client's session from outside the
// stdio loop: a signal, or the death of the parent process.
type clientEvent struct {
	signal os.Signal // nil when the parent died
	reason string
}

// watchClient reports the termination signals and the death of the parent
// process (a host killed hard leaves its children reparented with stdin
// still open) until ctx ends, then closes the channel.
func watchClient(ctx context.Context, env *environment) <-chan clientEvent {
	events := make(chan clientEvent, 4)
	registered := env.signals // registerSignals ran when the command began
	parentGone := proc.WatchParent(ctx)
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

// wait returns once every signal is registered; until then a signal has
// its default effect.
func (r *registeredSignals) wait() { <-r.ready }
