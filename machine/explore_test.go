package machine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// Random input sequences over the harness: whatever comes in, in whatever
// order, the machine fires no trigger it cannot handle, never elects
// longer than its bound, keeps trying to share while alone, ends a
// drained server, and exits on a signal.
func TestExplore_RandomInputs(t *testing.T) {
	for seed := range uint64(3000) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { explore(t, seed) })
		})
	}
}

func explore(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, seed*7+1))
	changes := make(chan struct{})
	var trace []string
	enteredElecting := time.Now()
	var overlap []string
	startsFailed, errsHanded := 0, 0
	var el *countingElection
	h := start(t, func(cfg *Config) {
		cfg.Election.(*fakeElection).changes = changes
		cfg.Server = &slowUnwindServer{fakeServer: cfg.Server.(*fakeServer), unwind: time.Duration(r.IntN(3)) * 150 * time.Millisecond}
		el = &countingElection{fakeElection: cfg.Election.(*fakeElection), overlap: &overlap, last: time.Now()}
		cfg.Election = el
		cfg.BusyGrace = time.Second
		cfg.Headless = seed%3 == 2
		cfg.ElectionBound = 3 * time.Second
		next := cfg.OnTransition
		cfg.OnTransition = func(tr Transition) {
			if tr.Trigger == ServerStartFailed {
				startsFailed++
			}
			if tr.To == Electing {
				enteredElecting = time.Now()
			}
			if tr.To == Alone {
				el.mark()
			}
			next(tr)
		}
	})
	urls := []string{oldURL, newURL}
	classes := append([]Class{}, Classes...)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format+"\nsteps: %s\nlog:\n%s", append([]any{seed}, append(args, strings.Join(trace, "; "), logLines(h))...)...)
	}
	for step := 0; step < 60; step++ {
		synctest.Wait()
		var did string
		switch k := r.IntN(20); {
		case k < 6:
			obs := Observation{Class: classes[r.IntN(len(classes))], URL: urls[r.IntN(2)], Owner: 1 + r.IntN(2), Reason: "r", Grace: time.Duration(r.IntN(3)) * time.Second}
			select {
			case h.el.results <- obs:
				did = "observe " + string(obs.Class)
			default:
			}
		case k < 8:
			var err error
			if r.IntN(3) == 0 {
				err = errors.New("bind failed")
			}
			select {
			case h.srv.results <- err:
				did = fmt.Sprint("started ", err)
				if err != nil {
					errsHanded++
				}
			default:
			}
		case k < 9:
			n := r.IntN(3)
			h.m.SessionsChanged(n)
			did = fmt.Sprint("sessions ", n)
		case k < 10:
			select {
			case changes <- struct{}{}:
				did = "lease change (watch)"
			default:
				h.m.LeaseChanged()
				did = "lease change"
			}
		case k < 11:
			h.m.LeaseReplaced("replaced")
			did = "lease replaced"
		case k < 13:
			f := BridgeFailure{Reason: "bridge failed", URL: urls[r.IntN(2)], Alone: r.IntN(2) == 0}
			switch r.IntN(3) {
			case 0:
				f.Full, f.RetryAfter = true, time.Duration(r.IntN(3))*time.Second
			case 1:
				f.Silent = time.Duration(r.IntN(2000)) * time.Millisecond
			}
			h.m.BridgeFailedWith(f)
			did = fmt.Sprintf("bridge failed %+v", f)
		case k < 14:
			switch r.IntN(3) {
			case 0:
				h.el.takeOverErr = nil
			case 1:
				h.el.takeOverErr = ErrContended
			case 2:
				h.el.takeOverErr = errors.New("read-only")
			}
			did = fmt.Sprint("take-over error ", h.el.takeOverErr)
		case k < 15 && r.IntN(4) == 0:
			h.m.ClientLeft()
			did = "client left"
		default:
			d := []time.Duration{time.Millisecond, 100 * time.Millisecond, time.Second, 5 * time.Second}[r.IntN(4)]
			time.Sleep(d)
			did = fmt.Sprint("sleep ", d)
		}
		if did == "" {
			continue
		}
		synctest.Wait()
		trace = append(trace, did)
		h.rec.take()
		if startsFailed > errsHanded {
			fail("%d starts failed, %d were made to", startsFailed, errsHanded)
		}
		if len(overlap) > 0 {
			fail("two attempts at once: %v", overlap)
		}
		for _, e := range h.logs.FilterMessage("firing a trigger").All() {
			fail("firing a trigger: %v", e.ContextMap())
		}
		select {
		case <-h.done:
			if !h.m.clientLeft && h.m.signal == "" {
				fail("Run returned without the client leaving")
			}
			return
		default:
		}
		m := h.m
		switch st := m.State(); st {
		case Electing: // what it waits for is the machine's own: read from here, it would race
			if time.Since(enteredElecting) > m.cfg.ElectionBound {
				fail("electing for %s", time.Since(enteredElecting))
			}
		case Alone:
			if idle := el.idleFor(); idle > DefaultJoinRetryMax+time.Second {
				fail("alone and not trying to share for %s", idle)
			}
		case OwnerLeft, LeaseLost:
			if m.clientLeft && m.sessions <= 0 {
				fail("%s with its client gone and no session", st)
			}
		}
	}
	h.m.Signal("SIGTERM")
	time.Sleep(time.Second) // a start unwinding: Run waits for it
	synctest.Wait()
	select {
	case <-h.done:
	default:
		fail("a signal did not end the machine (state %s)", h.m.State())
	}
}

// countingElection notes an attempt or take-over begun while another runs
// whose ctx is not done (the machine would then hold two results), and
// when the last one begun or ended.
type countingElection struct {
	*fakeElection
	mu      sync.Mutex
	live    []context.Context
	overlap *[]string
	last    time.Time
}

// mark notes now as when the election was last heard of.
func (c *countingElection) mark() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
}

// idleFor is how long no attempt or take-over has run; 0 while one runs.
func (c *countingElection) idleFor() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.live) > 0 {
		return 0
	}
	return time.Since(c.last)
}

func (c *countingElection) begin(what string, ctx context.Context) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = time.Now()
	for _, o := range c.live {
		if o.Err() == nil {
			*c.overlap = append(*c.overlap, what)
		}
	}
	c.live = append(c.live, ctx)
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.live = slices.DeleteFunc(c.live, func(o context.Context) bool { return o == ctx })
		c.last = time.Now()
	}
}

func (c *countingElection) Attempt(ctx context.Context) Observation {
	defer c.begin("attempt", ctx)()
	return c.fakeElection.Attempt(ctx)
}

func (c *countingElection) TakeOver(ctx context.Context, obs Observation) (bool, error) {
	defer c.begin("take-over", ctx)()
	return c.fakeElection.TakeOver(ctx, obs)
}

func logLines(h *harness) string {
	var b strings.Builder
	for _, e := range h.logs.All() {
		fmt.Fprintf(&b, "  %s %s %v\n", e.Level, e.Message, e.ContextMap())
	}
	return b.String()
}
