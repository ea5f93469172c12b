package node

import (
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
)

// register writes this server's row, right after its HTTP bind
// (docs/fleet.md), in the background: publishing the URL never waits for
// the registry. A failure is logged, the server serves all the same, and
// the row is tried again until it is written.
func (s *sharedServer) register(instance, url string) *runtimes.Registration {
	n := s.node
	path, err := runtimes.Path(n.co.Registry, os.Getenv)
	failed := func(err error, then string) {
		where := err.Error()
		if path != "" { // none when no path could be made
			where = path + ": " + where
		}
		n.log.Warn(fmt.Sprintf("cannot register this server in the fleet registry: %s; serving anyway, %s", where, then),
			zap.String("registry", path), zap.String("reason", err.Error()))
	}
	if err != nil {
		failed(err, "and a fleet inventory lists this server as unregistered")
		return nil
	}
	return runtimes.Register(path, s.row(instance, url), func(err error) {
		if err != nil {
			failed(err, "and trying again: until then a fleet inventory lists this server as unregistered")
			return
		}
		n.log.Info("registered this server in the fleet registry", zap.String("registry", path), zap.String("runtime_id", instance))
	})
}

// row is what this server says about itself.
func (s *sharedServer) row(instance, url string) fleet.Row {
	n := s.node
	rev := release.StartupRevision()
	r := fleet.Row{
		RuntimeID:       instance,
		Profile:         n.co.Profile,
		Role:            profileRole(registeredManifest(n.co), n.co.Profile),
		State:           runtimes.StateLeaseholder,
		RepositoryRoot:  n.co.Root,
		RepositoryID:    layer.RepositoryID(n.co.Root),
		RepositoryDir:   n.co.RootID,
		StartupRevision: rev.Startup,
		ModuleVersion:   rev.ModuleVersion,
		VCSRevision:     rev.VCSRevision,
		Transport:       "streamable-http",
		URL:             url,
		PID:             os.Getpid(),
		PIDNamespace:    proc.PIDNamespace(),
		RegisteredAt:    time.Now(),
	}
	r.Cohort, r.CohortSource, r.ParentPID, r.ParentStart = runtimes.ClientCohort(os.Getenv(runtimes.CohortEnv), os.Getppid(), proc.ProcessStart)
	if self, err := n.lease.Self(); err == nil { // as it started: its file may be gone since
		r.ProcessStart, r.BootID, r.Executable = self.Start, self.BootID, self.Executable.Path
	}
	// Read last: the registration is after everything above, and a zero
	// (unreadable) clock makes the row agree with no process at all.
	r.RegisteredTicks, _ = proc.BootTicks()
	return r
}

// registeredManifest is the manifest as it reads when the server
// registers: a server started by a take-over registers the role the
// manifest gives now, not the one its process read when its client
// started. One that no longer reads leaves the one read at the start.
func registeredManifest(co *Checkout) layer.Manifest {
	if m, err := layer.LoadManifest(co.Root); err == nil {
		return m
	}
	return co.Manifest
}

// markLost records that this server lost its lease: from now on it is a
// draining member. The write runs on its own goroutine, since LoseLease
// runs on the machine's loop and a registry write may wait for a lock.
func (s *sharedServer) markLost() {
	s.mu.Lock()
	reg := s.reg
	s.mu.Unlock()
	if reg == nil {
		return
	}
	log := s.node.log.With(zap.String("registry", reg.Path()))
	reg.MarkLost(time.Now(), func(err error) {
		if err != nil {
			log.Warn("cannot record in the fleet registry that this server lost its lease; an inventory counts it as running", zap.String("reason", err.Error()))
			return
		}
		log.Info("recorded in the fleet registry that this server lost its lease: a draining member until it ends", zap.String("runtime_id", reg.RuntimeID()))
	})
}

// deregister removes this server's row, on a clean exit, once a pending
// state change is written. It waits for nothing: a registry locked by
// another writer (the registry is the user's, shared by every checkout)
// must not hold up the lease's release, which follows the server's stop;
// the process waits for the removal only as it ends (Node.Run).
func (s *sharedServer) deregister() {
	s.mu.Lock()
	reg := s.reg
	s.reg = nil
	s.mu.Unlock()
	s.drains.Go(func() { s.remove(reg) })
}

// remove removes reg's row, if any.
func (s *sharedServer) remove(reg *runtimes.Registration) {
	if reg == nil {
		return
	}
	log := s.node.log.With(zap.String("registry", reg.Path()))
	removed, err := reg.Remove()
	if err != nil {
		log.Warn("cannot remove this server's row from the fleet registry; an inventory lists it as stale", zap.String("reason", err.Error()))
		return
	}
	if removed {
		log.Info("removed this server's row from the fleet registry", zap.String("runtime_id", reg.RuntimeID()))
	}
}
