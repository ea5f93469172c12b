package machine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// The harness runs a Machine over recording fake ports inside a synctest
// bubble: time is fake, and synctest.Wait lets everything settle before a
// test looks at what happened. Port calls and changes of state go into one
// ordered trace, so a test asserts their order too.

const testLease = "/repo/.ai/local/state/mcp/server.json"

// recorder keeps the trace; ports call it from several goroutines.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, fmt.Sprintf(format, args...))
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// fakeElection: each Attempt waits for the test to hand it an observation.
type fakeElection struct {
	rec         *recorder
	results     chan Observation
	takeOverErr error
	// takeOverWaits makes TakeOver wait until its context ends, as one
	// waiting for a lock held by a stopped process does.
	takeOverWaits bool
	raceLost      bool          // TakeOver found the lease changed, and removed nothing
	changes       chan struct{} // lease changes the test makes; nil: none
}

func (f *fakeElection) Attempt(ctx context.Context) Observation {
	f.rec.add("attempt")
	select {
	case obs := <-f.results:
		return obs
	case <-ctx.Done():
		return Observation{Class: ClassWon} // a late win must be dropped
	}
}

func (f *fakeElection) TakeOver(ctx context.Context, obs Observation) (bool, error) {
	f.rec.add("take-over %s %v", obs.Class, obs.Opaque)
	if f.takeOverWaits {
		<-ctx.Done()
		return false, ctx.Err()
	}
	return f.takeOverErr == nil && !f.raceLost, f.takeOverErr
}

func (f *fakeElection) Release(context.Context) error {
	f.rec.add("release")
	return nil
}

// Watch reports f.changes (nil: none) until ctx ends, then closes.
func (f *fakeElection) Watch(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case <-f.changes:
				select {
				case out <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out, nil
}

// fakeServer: each Start waits for the test to hand it a result.
type fakeServer struct {
	rec     *recorder
	results chan error
}

func (f *fakeServer) Start(ctx context.Context) error {
	f.rec.add("server start")
	select {
	case err := <-f.results:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeServer) LoseLease(reason string) { f.rec.add("server lose-lease: %s", reason) }

func (f *fakeServer) Stop(context.Context) error {
	f.rec.add("server stop")
	return nil
}

func (f *fakeServer) HandOver(context.Context) error {
	f.rec.add("server hand-over")
	return nil
}

type fakeBridge struct{ rec *recorder }

func (f *fakeBridge) Attach(_ context.Context, live Observation) {
	f.rec.add("bridge attach %s", live.URL)
}
func (f *fakeBridge) Stop() { f.rec.add("bridge stop") }

type fakeStandalone struct {
	rec *recorder
	err error
}

func (f *fakeStandalone) Serve(_ context.Context, reason string) error {
	f.rec.add("standalone: %s", reason)
	return f.err
}

type harness struct {
	t      *testing.T
	m      *Machine
	rec    *recorder
	el     *fakeElection
	srv    *fakeServer
	sa     *fakeStandalone
	logs   *observer.ObservedLogs
	done   chan Outcome
	cancel context.CancelFunc // abandons the machine
}

// start builds a machine over fakes, lets tweak adjust its Config, and runs
// it until the test ends. It must be called inside a synctest bubble.
func start(t *testing.T, tweak ...func(*Config)) *harness {
	t.Helper()
	rec := &recorder{}
	core, logs := observer.New(zap.DebugLevel)
	h := &harness{
		t:    t,
		rec:  rec,
		el:   &fakeElection{rec: rec, results: make(chan Observation)},
		srv:  &fakeServer{rec: rec, results: make(chan error)},
		sa:   &fakeStandalone{rec: rec},
		logs: logs,
		done: make(chan Outcome, 1),
	}
	cfg := Config{
		Election:   h.el,
		Server:     h.srv,
		Bridge:     &fakeBridge{rec: rec},
		Standalone: h.sa,
		LeasePath:  testLease,
		Logger:     zap.New(core),
		OnTransition: func(tr Transition) {
			rec.add("=> %s on %s", tr.To, tr.Trigger)
		},
	}
	for _, f := range tweak {
		f(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	ctx, cancel := context.WithCancel(t.Context())
	h.cancel = cancel
	go func() { h.done <- m.Run(ctx) }()
	return h
}

// expect waits for the machine to settle and checks the trace since the
// last call.
func (h *harness) expect(want ...string) {
	h.t.Helper()
	synctest.Wait()
	if got := h.rec.take(); !slices.Equal(got, want) {
		h.t.Fatalf("trace:\n got  %q\n want %q", got, want)
	}
}

// observe hands obs to the attempt in flight.
func (h *harness) observe(obs Observation) {
	h.t.Helper()
	synctest.Wait()
	select {
	case h.el.results <- obs:
	default:
		h.t.Fatalf("no attempt is waiting for the %s observation", obs.Class)
	}
}

// started hands err to the server start in flight.
func (h *harness) started(err error) {
	h.t.Helper()
	synctest.Wait()
	select {
	case h.srv.results <- err:
	default:
		h.t.Fatalf("no server start is waiting")
	}
}

// state checks the current state once the machine has settled.
func (h *harness) state(want State) {
	h.t.Helper()
	synctest.Wait()
	if got := h.m.State(); got != want {
		h.t.Fatalf("state = %s, want %s", got, want)
	}
}

// outcome waits for Run to return.
func (h *harness) outcome() Outcome {
	h.t.Helper()
	synctest.Wait()
	select {
	case out := <-h.done:
		return out
	default:
		h.t.Fatalf("Run has not returned; state %s", h.m.State())
		return Outcome{}
	}
}

// exitsWith waits for Run to return and checks its outcome.
func (h *harness) exitsWith(want Outcome) {
	h.t.Helper()
	if got := h.outcome(); got != want {
		h.t.Fatalf("outcome = %+v, want %+v", got, want)
	}
}

// Shortcuts to reach a state.

// toLeaseholder wins the election and starts the server.
func (h *harness) toLeaseholder() {
	h.t.Helper()
	h.observe(Observation{Class: ClassWon})
	h.started(nil)
	h.expect("attempt", "=> leaseholder on lease-won", "server start")
}

// toAttached finds a live server at url.
func (h *harness) toAttached(url string) {
	h.t.Helper()
	h.observe(Observation{Class: ClassLive, URL: url})
	h.expect("attempt", "=> attached on lease-live", "bridge attach "+url)
}

// logged returns the messages logged at or above level, in order.
func (h *harness) logged(level string) []string {
	var out []string
	for _, e := range h.logs.All() {
		if e.Level.String() == level {
			out = append(out, e.Message)
		}
	}
	return out
}
