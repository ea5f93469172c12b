package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"majordomus-mcp/machine"
	"majordomus-mcp/registry"
)

// election is the machine's Election port over the registry's lease file.
type election struct {
	observer *registry.Observer
	file     *registry.LeaseFile
	// document returns the lease this process writes when it wins: a fresh
	// instance each time, so a server never answers for another's lease.
	document func() registry.Lease
	// signalsHandled is closed once the process handles the termination
	// signals: only then does it create a lease, which it then always
	// removes before it dies. Reading and judging need not wait for it.
	signalsHandled <-chan struct{}
	// identityErr says why this process's identity cannot be read (an
	// unsupported system): it could write no lease that others could
	// judge, so every attempt finds the lease unusable and the client is
	// served alone with this reason.
	identityErr error
}

// Attempt reads and judges the lease once, and creates it when there is
// none.
func (e *election) Attempt(ctx context.Context) machine.Observation {
	if e.identityErr != nil {
		return machine.Observation{Class: machine.ClassUnusable, Reason: e.identityErr.Error()}
	}
	o, err := e.observer.Observe(ctx)
	if err != nil {
		return machine.Observation{Class: machine.ClassUnusable, Reason: err.Error()}
	}
	if o.Verdict.Class == registry.Absent {
		return e.acquire(ctx)
	}
	obs := machine.Observation{Class: electionClass(o.Verdict.Class), Reason: detail(o.Verdict), Opaque: o}
	if o.Verdict.Class == registry.Live {
		obs.URL = o.Lease.URLString()
	}
	return obs
}

// electionClass is the machine's name for the judge's verdict on a lease
// that exists (Absent is acquired, never reported).
func electionClass(c registry.Class) machine.Class {
	switch c {
	case registry.Live:
		return machine.ClassLive
	case registry.Stale:
		return machine.ClassStale
	case registry.Busy:
		return machine.ClassBusy
	case registry.Corrupt:
		return machine.ClassCorrupt
	case registry.Empty:
		return machine.ClassEmpty
	case registry.Binding:
		return machine.ClassBinding
	case registry.Abandoned:
		return machine.ClassAbandoned
	case registry.Superseded:
		return machine.ClassSuperseded
	case registry.Unprobed:
		return machine.ClassBusy // the probe never ran: wait and look again
	default: // Unusable, and any class this build does not know
		return machine.ClassUnusable
	}
}

// acquire creates the lease with the complete document.
func (e *election) acquire(ctx context.Context) machine.Observation {
	select {
	case <-e.signalsHandled:
	case <-ctx.Done():
		return machine.Observation{Class: machine.ClassUnusable, Reason: "the election was cancelled"}
	}
	err := e.file.Acquire(e.document())
	switch {
	case errors.Is(err, registry.ErrLeaseExists):
		// another process won between the read and the link: the next
		// attempt finds its lease
		return machine.Observation{Class: machine.ClassBinding, Reason: "another process created the lease first"}
	case err != nil:
		return machine.Observation{Class: machine.ClassUnusable, Reason: err.Error()}
	}
	if ctx.Err() != nil { // a cancelled attempt leaves nothing
		_ = e.file.Release()
		return machine.Observation{Class: machine.ClassUnusable, Reason: "the election was cancelled"}
	}
	return machine.Observation{Class: machine.ClassWon}
}

// TakeOver removes the unusable lease judged in obs, and nothing written
// after it was judged.
func (e *election) TakeOver(_ context.Context, obs machine.Observation) error {
	judged, ok := obs.Opaque.(registry.Observation)
	if !ok {
		return fmt.Errorf("taking over: no judged lease")
	}
	_, err := e.file.TakeOver(judged)
	if errors.Is(err, registry.ErrLockTimeout) {
		return fmt.Errorf("%w: %v", machine.ErrContended, err)
	}
	return err
}

// Release removes the lease if it is still this process's.
func (e *election) Release(context.Context) error {
	err := e.file.Release()
	if errors.Is(err, registry.ErrLeaseNotOurs) {
		return nil
	}
	return err
}

// Watch relays the lease file's changes while the machine elects.
func (e *election) Watch(ctx context.Context) (<-chan struct{}, error) {
	changes, err := registry.Watch(ctx, e.file.Path, 0, 0)
	if err != nil {
		return nil, err
	}
	out := make(chan struct{})
	go func() {
		defer close(out)
		for range changes {
			select {
			case out <- struct{}{}:
			case <-ctx.Done():
			}
		}
	}()
	return out, nil
}

// detail is a verdict's reason without its leading "<class> lease: ", which
// the machine's log line adds itself.
func detail(v registry.Verdict) string {
	return strings.TrimPrefix(v.Reason, string(v.Class)+" lease: ")
}
