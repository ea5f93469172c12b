package node

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"majordomus-mcp/fleet"
	"majordomus-mcp/internal/release"
	"majordomus-mcp/layer"
	"majordomus-mcp/registry"
	"majordomus-mcp/registry/proc"
	"majordomus-mcp/registry/runtimes"
)

// registryWriteTimeout bounds one write to the registry. SQLite's busy
// timeout (5 s) waits for another process's write; this adds room for the
// open and the migration.
const registryWriteTimeout = 10 * time.Second

// registration is this shared server's row in the runtime registry. The
// registry is evidence for fleet inventories only: no failure to write it
// ever stops a server from serving. It is logged, and an inventory then
// lists the server as unregistered (or its row as stale), which closes the
// gate — the honest answer.
type registration struct {
	path      string
	runtimeID string
	log       *zap.Logger
	pending   sync.WaitGroup // a state change being written
}

// register writes this server's row, right after its HTTP bind (SPEC §9).
// A failure is logged, and the server serves all the same.
func (s *sharedServer) register(ctx context.Context, instance, url string) {
	n := s.node
	log := n.log
	path, err := runtimes.Path(n.co.Registry, os.Getenv)
	if err == nil {
		err = writeRow(ctx, path, s.row(instance, url))
	}
	if err != nil {
		log.Warn(fmt.Sprintf("cannot register this server in the fleet registry: %s: %v; serving anyway, and a fleet inventory lists this server as unregistered", path, err),
			zap.String("registry", path), zap.String("reason", err.Error()))
		return
	}
	log.Info("registered this server in the fleet registry", zap.String("registry", path), zap.String("runtime_id", instance))
	s.mu.Lock()
	s.reg = &registration{path: path, runtimeID: instance, log: log}
	s.mu.Unlock()
}

// row is what this server says about itself.
func (s *sharedServer) row(instance, url string) fleet.Row {
	n := s.node
	rev := release.StartupRevision()
	r := fleet.Row{
		RuntimeID:       instance,
		Profile:         n.co.Profile,
		Role:            profileRole(n.co.Manifest, n.co.Profile),
		State:           runtimes.StateLeaseholder,
		RepositoryRoot:  n.co.Root,
		RepositoryID:    layer.RepositoryID(n.co.Root),
		StartupRevision: rev.Startup,
		ModuleVersion:   rev.ModuleVersion,
		VCSRevision:     rev.VCSRevision,
		Transport:       "streamable-http",
		URL:             url,
		PID:             os.Getpid(),
		RegisteredAt:    time.Now(),
	}
	r.Cohort, r.CohortSource, r.ParentPID, r.ParentStart = runtimes.ClientCohort(os.Getenv(runtimes.CohortEnv), os.Getppid(), proc.ProcessStart)
	if self, err := registry.Self(); err == nil {
		r.ProcessStart, r.BootID, r.Executable = self.Start, self.BootID, self.Executable.Path
	}
	// Read last: the registration is after everything above, and a zero
	// (unreadable) clock makes the row agree with no process at all.
	r.RegisteredTicks, _ = proc.BootTicks()
	return r
}

// writeRow opens the registry, writes the row and closes it.
func writeRow(ctx context.Context, path string, row fleet.Row) error {
	return runtimes.Write(context.WithoutCancel(ctx), path, registryWriteTimeout, func(ctx context.Context, rt *runtimes.DB) error {
		return rt.Register(ctx, row)
	})
}

// markLost records that this server lost its lease: from now on it is a
// draining member. It runs on its own goroutine, since LoseLease runs on
// the machine's loop and a registry write may wait for a lock.
func (s *sharedServer) markLost() {
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if reg == nil {
		return
	}
	reg.pending.Go(func() {
		err := reg.update(func(ctx context.Context, rt *runtimes.DB) error {
			return rt.SetState(ctx, reg.runtimeID, runtimes.StateLeaseLost, time.Now())
		})
		if err != nil {
			reg.log.Warn("cannot record in the fleet registry that this server lost its lease; an inventory counts it as running", zap.String("registry", reg.path), zap.String("reason", err.Error()))
			return
		}
		reg.log.Info("recorded in the fleet registry that this server lost its lease: a draining member until it ends", zap.String("registry", reg.path), zap.String("runtime_id", reg.runtimeID))
	})
}

// deregister removes this server's row, on a clean exit, once a pending
// state change is written.
func (s *sharedServer) deregister() {
	s.mu.Lock()
	reg := s.reg
	s.reg = nil
	s.mu.Unlock()
	if reg == nil {
		return
	}
	reg.pending.Wait()
	err := reg.update(func(ctx context.Context, rt *runtimes.DB) error { return rt.Remove(ctx, reg.runtimeID) })
	if err != nil {
		reg.log.Warn("cannot remove this server's row from the fleet registry; an inventory lists it as stale", zap.String("registry", reg.path), zap.String("reason", err.Error()))
		return
	}
	reg.log.Info("removed this server's row from the fleet registry", zap.String("registry", reg.path), zap.String("runtime_id", reg.runtimeID))
}

func (r *registration) update(do func(context.Context, *runtimes.DB) error) error {
	return runtimes.Write(context.Background(), r.path, registryWriteTimeout, do)
}
