package registry

import (
	"bytes"
	"context"
	"sync"
	"time"
)

// ProbeTarget is what a probe asks: does the server at URL answer for the
// checkout RepositoryID as the server Instance, and say it holds the lease?
type ProbeTarget struct {
	URL          string
	RepositoryID string
	Instance     string
}

// ProbeFunc probes a lease's server. It must return within its own timeout
// or when ctx ends. [HTTPProbe] is the real one.
type ProbeFunc func(ctx context.Context, target ProbeTarget) ProbeResult

// Observation is one judged reading of a lease path: what was there, its
// decoded document, the owner's liveness and the verdict. Pass it to
// [LeaseFile.TakeOver] to remove exactly what was judged.
type Observation struct {
	// Path is the lease path that was read.
	Path string
	// Snapshot holds the exact bytes that were judged.
	Snapshot
	// Lease is the decoded document, nil unless it is a valid one.
	Lease   *Lease
	Owner   Liveness
	Verdict Verdict
}

// Observer reads and judges one lease path, again on every call. It keeps
// one piece of state: since when it has seen the same lease busy, so that
// a silent server with a live owner is taken over once the busy grace has
// passed on this process's clock.
//
// An Observer is safe for concurrent use; use it through a pointer.
type Observer struct {
	// Path is the lease path.
	Path string
	// RepositoryID is this checkout's repository id, which a live server
	// must answer with.
	RepositoryID string
	// Executable and Version describe this process, for the superseded rule.
	Executable Executable
	Version    string
	Timings    Timings
	// Probe probes a lease's URL; nil counts every probe as failed.
	Probe ProbeFunc
	// Env is the host; the zero Env is the real one.
	Env Env

	mu        sync.Mutex
	busy      *Snapshot // the lease last judged busy
	busySince time.Time // when it was first judged busy
}

// Observe reads the lease path (never following a symbolic link), decodes
// it, tells whether its owner is alive, probes its URL when the judge needs
// that, and judges it. It fails only when ctx ends.
func (o *Observer) Observe(ctx context.Context) (Observation, error) {
	snap := Read(o.Path)
	now := o.Env.now()
	obs := Observation{Path: o.Path, Snapshot: snap}
	in := Input{
		Found:      snap.Found,
		Raw:        snap.Raw,
		Executable: o.Executable,
		Version:    o.Version,
		Timings:    o.Timings,
	}
	if snap.Err != nil {
		in.ReadErr = snap.Err.Error()
	}
	if !snap.ModTime.IsZero() {
		in.Age = now.Sub(snap.ModTime)
	}
	if snap.Found == Regular {
		if doc, problem := decode(snap.Raw); problem == "" {
			obs.Lease = &doc
			obs.Owner = o.Env.Alive(doc.PID, doc.ProcessStart, doc.BootID)
			in.Owner = obs.Owner
		}
	}
	in.BusyFor = o.busyFor(snap, now)

	v := Judge(in)
	if v.NeedsProbe {
		in.Probe = ProbeResult{Status: ProbeFailed, Reason: "no probe configured"}
		if o.Probe != nil {
			in.Probe = o.Probe(ctx, ProbeTarget{
				URL:          obs.Lease.URLString(),
				RepositoryID: o.RepositoryID,
				Instance:     obs.Lease.Instance,
			})
		}
		if err := ctx.Err(); err != nil {
			return Observation{}, err
		}
		v = Judge(in)
	}
	obs.Verdict = v
	o.noteBusy(snap, v.Class == Busy, now)
	return obs, nil
}

// sameBytes reports whether a and b hold the same bytes. The busy timer
// follows the lease's content: a rewrite of the same document does not
// restart it.
func sameBytes(a, b Snapshot) bool {
	return a.Found == b.Found && bytes.Equal(a.Raw, b.Raw)
}

// busyFor returns how long snap has been judged busy without changing.
func (o *Observer) busyFor(snap Snapshot, now time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.busy == nil || !sameBytes(*o.busy, snap) {
		return 0
	}
	return now.Sub(o.busySince)
}

// noteBusy starts the busy timer on the first busy verdict for snap and
// clears it on any other verdict.
func (o *Observer) noteBusy(snap Snapshot, busy bool, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case !busy:
		o.busy = nil
	case o.busy == nil || !sameBytes(*o.busy, snap):
		o.busy, o.busySince = &snap, now
	}
}
