package main

import (
	"context"
	"os"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// serveShared runs the process as one node of the checkout's shared
// server (internal/node): it elects, then serves as leaseholder, attaches,
// or serves alone. withClient is false for `serve`.
func serveShared(ctx context.Context, env *environment, withClient bool) error {
	env.state.Set(string(machine.Electing))
	if err := node.ValidateProfile(env.opts.profile); err != nil {
		return usageError("--profile: %v", err)
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	cfg := node.Config{
		Checkout:       co,
		Times:          env.opts.times,
		HTTPHost:       env.opts.httpHost,
		HTTPPort:       env.opts.httpPort,
		MaxSessions:    env.opts.maxSess,
		Stdout:         env.stdout,
		SignalsHandled: env.signals.ready,
		Logger:         env.log,
		OnTransition:   func(t machine.Transition) { env.state.Set(string(t.To)) },
	}
	if withClient {
		cfg.Stdin = env.stdin
	}
	n, err := node.New(cfg)
	if err != nil {
		return nodeError(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	died := make(chan os.Signal, 1) // the first signal, which the process dies of
	go func() {
		for ev := range watchClient(runCtx, env, withClient) {
			if ev.signal == nil {
				env.log.Info("the client left", zap.String("reason", ev.reason))
				n.ClientLeft()
				continue
			}
			select {
			case died <- ev.signal:
			default:
			}
			n.Signal(signalName(ev.signal))
		}
	}()
	outcome, err := n.Run(runCtx)
	if outcome.Signal != "" {
		select {
		case env.died = <-died:
		default:
		}
	}
	return nodeError(err)
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
