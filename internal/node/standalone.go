package node

import (
	"cmp"
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// RunStandalone serves the client of cfg alone (--standalone): no shared
// server, no port, no lease, nothing written anywhere. It returns when the
// client leaves or ctx ends; its error is why the client could not be
// served at all.
func RunStandalone(ctx context.Context, cfg Config) error {
	co, log := cfg.Checkout, cmp.Or(cfg.Logger, zap.NewNop())
	times, err := ResolveTimings(co.Manifest.Server, cfg.Times)
	if err != nil {
		return err
	}
	ownStdio(&cfg)
	ctx, left := context.WithCancel(ctx)
	defer left()
	go onParentGone(ctx, log, left)
	life, stop := context.WithCancel(ctx)
	defer co.unwatched()
	defer stop()
	srv, err := co.load(life, func() surface.Process { return describeAs("standalone", "", "", co.Profile) }, times.IdleTimeout)
	if err != nil {
		return err
	}
	ix := srv.layer.Current()
	log.Info("standalone: serving this client alone; no shared server, no HTTP port, no lease",
		zap.String("checkout", ix.Name), zap.Int("objects", len(ix.Objects)), zap.String("index_state", ix.State()))

	out := wire.NewFrameWriter(cfg.Stdout)
	local, err := stdio.NewLocal(life, srv.surface.MCP, out, localSession)
	if err != nil {
		return fmt.Errorf("serving the client in process: %w", err)
	}
	defer local.Close()
	if cfg.SignalsHandled != nil {
		select { // SIGPIPE is handled before the loop writes
		case <-cfg.SignalsHandled:
		case <-ctx.Done():
			return nil
		}
	}
	loop := stdio.Loop{In: cfg.Stdin, Out: out, Backend: local, Logger: log}
	served := make(chan struct{})
	go func() {
		defer close(served)
		loop.Serve(ctx)
	}()
	select {
	case <-served:
	case <-ctx.Done(): // a signal, or the client gone: its answers under way may wait on a full stdout for ever
	}
	return nil
}
