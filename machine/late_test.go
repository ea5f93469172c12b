package machine

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// slowUnwindServer is a fakeServer whose Start, once its ctx is done,
// takes a moment to undo what it did (shutting its listener down,
// carrying the client's session back) before it returns: prompt, as the
// port asks, but not instantaneous.
type slowUnwindServer struct {
	*fakeServer
	unwind time.Duration
}

func (s *slowUnwindServer) Start(ctx context.Context) error {
	s.rec.add("server start")
	select {
	case err := <-s.results:
		return err
	case <-ctx.Done():
		time.Sleep(s.unwind)
		return ctx.Err()
	}
}

// A lease lost while the server starts hands the client over, and the
// election that follows may win a lease again (the lease was emptied,
// say) before the first start has finished unwinding: that start's late
// "context canceled" is the old term's, not the new server's. It must not
// cancel the new start nor send the client alone, releasing the lease it
// just won.
func TestLeaseLost_ALateResultOfTheHandedOverStartIsDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var srv *slowUnwindServer
		h := start(t, func(cfg *Config) {
			srv = &slowUnwindServer{fakeServer: cfg.Server.(*fakeServer), unwind: 50 * time.Millisecond}
			cfg.Server = srv
		})
		h.observe(Observation{Class: ClassWon})
		h.expect("attempt", "=> leaseholder on lease-won", "server start")
		h.m.LeaseReplaced("empty")
		synctest.Wait()
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: empty",
			"server hand-over", "=> electing on hand-over", "attempt")
		h.observe(Observation{Class: ClassWon}) // the new election wins at once
		h.expect("=> leaseholder on lease-won", "server start")
		after(100 * time.Millisecond) // the first start has unwound meanwhile
		h.expect()                    // nothing: the new start is still under way
		h.state(Leaseholder)
		h.started(nil)
		h.expect()
		h.state(Leaseholder)
		h.m.Signal("SIGTERM")
		h.expect("server stop", "release", "=> exited on signal")
	})
}

// A bridge may report a second failure before Stop (another message that
// could not be delivered): electing ignores it (failOver). Ignored, it
// must change nothing, and the silence the first report measured still
// counts toward the busy grace: a frozen server costs one grace, not two
// (docs/design.md, "One busy grace").
func TestAttached_ASecondReportBeforeStopKeepsTheSilence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const grace = time.Second
		h := start(t, func(cfg *Config) { cfg.BusyGrace = grace })
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(BridgeFailure{Reason: "the shared server at " + oldURL + " has answered no probe for 1s", URL: oldURL, Silent: grace})
		h.m.BridgeFailedWith(BridgeFailure{Reason: "the session was lost twice"}) // reported before Stop: ignored
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassBusy, URL: oldURL, Reason: "silent", Opaque: "as-judged"})
		h.expect("take-over busy as-judged", "attempt")
	})
}

// The same, into alone: a full server's refusal is the one that counts,
// and a later report of the stopped bridge neither makes the next try
// attach to the full server before it asked nor warns again.
func TestAttached_ASecondReportBeforeStopKeepsTheFullServersWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.JoinRetry = 100 * time.Millisecond
			cfg.Election.(*fakeElection).changes = make(chan struct{})
		})
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(refusedBy(oldURL, 5*time.Second))
		h.m.BridgeFailedWith(BridgeFailure{Reason: "the session was lost twice", Alone: true})
		h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
		refused := time.Now()
		h.el.changes <- struct{}{} // the lease touched: a try comes soon, and finds the full server

		for h.m.State() == Alone {
			for len(h.rec.take()) == 0 {
				after(10 * time.Millisecond)
			}
			h.observe(Observation{Class: ClassLive, URL: oldURL})
			synctest.Wait()
		}
		if waited := time.Since(refused); waited < 5*time.Second {
			t.Errorf("attached again to the full server after %s, want after the 5s it asked", waited)
		}
		for _, l := range h.logs.FilterMessageSnippet("still serving this client alone").All() {
			if !strings.Contains(l.Message, fullReasonText) {
				t.Errorf("%q; want the full server's reason", l.Message)
			}
		}
	})
}

// An election that ran out of time before any attempt finished (a lease
// read that hangs, say) sends the client alone; the line that says when
// it tries again gives the reason, not an empty class and reason.
func TestAlone_AfterATimeoutWithNoObservationSaysWhy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.expect("attempt")
		after(DefaultElectionBound)
		reason := "no election attempt finished within 20s"
		h.expect("=> alone on election-timed-out", "standalone: "+reason, "release")
		lines := h.logs.FilterMessageSnippet("still serving this client alone").All()
		if len(lines) != 1 {
			t.Fatalf("lines = %d", len(lines))
		}
		if got := lines[0].ContextMap()["reason"]; got != reason {
			t.Errorf("reason = %q in %q, want %q", got, lines[0].Message, reason)
		}
	})
}
