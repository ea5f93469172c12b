package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"

	"majordomus-mcp/layer"
	"majordomus-mcp/surface"
	"majordomus-mcp/transport"
)

// runStdio serves one MCP client on stdio.
func runStdio(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("unexpected argument %q", args[0])
	}
	// Go kills a process that writes to a broken stdout pipe unless SIGPIPE
	// is being received; then the write fails with EPIPE and the loop ends.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, terminationSignals...)
	defer signal.Stop(signals)

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case sig := <-signals:
			env.died = sig
			cancel(fmt.Errorf("received %s", sig))
		case <-ctx.Done():
		}
	}()
	go watchParent(ctx, cancel, time.Second)

	env.state.Set("standalone")
	srv, err := openLayer(ctx, env)
	if err != nil {
		return err
	}
	env.log.Info("standalone: serving this client alone; no shared server, no HTTP port, no lease",
		zap.String("checkout", srv.index().Name), zap.Int("objects", len(srv.index().Objects)), zap.String("index", srv.index().State()))

	out := transport.NewFrameWriter(env.stdout)
	local, err := transport.NewLocal(ctx, srv.surface.MCP, out, "stdio")
	if err != nil {
		return withCode(exitInternal, err)
	}
	defer local.Close()
	loop := transport.Stdio{In: env.stdin, Out: out, Backend: local, Logger: env.log}
	ending := loop.Serve(ctx)
	if ending == transport.Cancelled {
		env.log.Info("stopping", zap.String("reason", context.Cause(ctx).Error()))
	}
	return nil
}

// served is a checkout's layer with the MCP surface over it.
type served struct {
	layer   *layer.Layer
	surface *surface.Surface
}

func (s *served) index() *layer.Index { return s.layer.Current() }

// openLayer finds the checkout, loads its layer and builds the MCP surface,
// watching the layer for changes until ctx ends. Its errors carry the exit
// codes of the contract: 12 no checkout, 10 invalid manifest or a degraded
// index under --strict.
func openLayer(ctx context.Context, env *environment) (*served, error) {
	start := env.opts.repo
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, withCode(exitInternal, fmt.Errorf("reading the working directory: %w", err))
		}
		start = wd
	}
	root, err := layer.FindCheckout(start)
	if err != nil {
		return nil, withCode(exitMissing, err)
	}
	if _, err := layer.LoadManifest(root); err != nil {
		return nil, withCode(exitContract, err)
	}
	lay, err := layer.Open(layer.Config{Root: root, Strict: env.opts.strict, Logger: env.log.Named("layer")})
	switch {
	case errors.Is(err, layer.ErrDegraded), errors.Is(err, layer.ErrInvalidManifest):
		return nil, withCode(exitContract, err)
	case err != nil:
		return nil, withCode(exitInternal, err)
	}
	surf := surface.New(surface.Config{
		Layer:   lay,
		Version: version(),
		Logger:  env.log.Named("surface"),
	})
	go func() {
		if err := lay.Watch(ctx, surf.IndexChanged); err != nil {
			env.log.Warn("watching the layer failed; changes are not picked up", zap.Error(err))
		}
	}()
	return &served{layer: lay, surface: surf}, nil
}

// watchParent ends the session when the process that spawned this one dies
// with our stdin still open (a host killed hard leaves its children
// reparented, not closed).
func watchParent(ctx context.Context, cancel context.CancelCauseFunc, every time.Duration) {
	parent := os.Getppid()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if os.Getppid() != parent {
				cancel(fmt.Errorf("the parent process %d is gone", parent))
				return
			}
		}
	}
}
