package machine

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zapcore"
)

const fullReasonText = "the shared server at " + oldURL + " is full (2 sessions)"

// refusedBy is the bridge's report of a full server that asks for retry.
func refusedBy(url string, retry time.Duration) BridgeFailure {
	return BridgeFailure{Reason: "the shared server at " + url + " is full (2 sessions)", URL: url, Full: true, RetryAfter: retry}
}

// A full server sends the client alone at once, with the server's reason,
// whatever the election's bound, and is tried again when it asked to be:
// not sooner, to no purpose, nor later, which the tries' doubling waits
// would make it. However little it asks, it is not tried more often than
// twice a second; one that does not say is tried again after a second.
func TestAttached_AFullServerSendsTheClientAloneAtOnce(t *testing.T) {
	for _, tc := range []struct {
		asked, waited time.Duration
	}{{5 * time.Second, 5 * time.Second}, {time.Millisecond, fullWaitFloor}, {0, fullWaitDefault}} {
		synctest.Test(t, func(t *testing.T) {
			h := start(t, func(cfg *Config) { cfg.JoinRetry = 100 * time.Millisecond })
			h.toAttached(oldURL)
			refused := time.Now()
			h.m.BridgeFailedWith(refusedBy(oldURL, tc.asked))
			h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
			tries := 0
			for h.m.State() == Alone {
				for len(h.rec.take()) == 0 {
					after(10 * time.Millisecond)
				}
				h.observe(Observation{Class: ClassLive, URL: oldURL})
				synctest.Wait()
				tries++
			}
			if waited := time.Since(refused); waited < tc.waited || waited > tc.waited+100*time.Millisecond || tries != 1 {
				t.Errorf("asked %s: attached again after %s and %d tries, want after %s, in one try", tc.asked, waited, tries, tc.waited)
			}
			for _, w := range h.logged("warn") {
				if strings.Contains(w, "shutting down") {
					t.Errorf("a full server was said to be shutting down: %q", w)
				}
			}
			for _, l := range h.logs.FilterMessageSnippet("still serving this client alone").All() {
				if !strings.Contains(l.Message, fullReasonText) {
					t.Errorf("asked %s: %q; want the server's reason", tc.asked, l.Message)
				}
			}
			// Full again, the client still alone: why is said again only at
			// debug. Once a bridge served it, alone again is a new detour.
			warned := func() int {
				return h.logs.FilterMessageSnippet("cannot use the shared server").FilterLevelExact(zapcore.WarnLevel).Len()
			}
			h.expect("=> attached on lease-live", "bridge attach "+oldURL)
			again := refusedBy(oldURL, tc.asked)
			again.Alone = true
			h.m.BridgeFailedWith(again)
			h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
			if n := warned(); n != 1 {
				t.Errorf("asked %s: the full server was warned of %d times, want once", tc.asked, n)
			}
			for h.m.State() == Alone {
				for len(h.rec.take()) == 0 {
					after(10 * time.Millisecond)
				}
				h.observe(Observation{Class: ClassLive, URL: oldURL})
				synctest.Wait()
			}
			h.rec.take()
			h.m.BridgeFailedWith(refusedBy(oldURL, tc.asked)) // the session it served lost, and the server full
			h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
			if n := warned(); n != 2 {
				t.Errorf("asked %s: served, then alone again at a full server, warned of %d times in all, want 2", tc.asked, n)
			}
		})
	}
}

// Tried again as it asked, a full server already warned of is said at
// debug, there and back; another server at its URL, at info.
func TestAlone_TriesOfAFullServerAreSaidOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.JoinRetry = 100 * time.Millisecond })
		h.observe(Observation{Class: ClassLive, URL: oldURL, Owner: 7})
		h.expect("attempt", "=> attached on lease-live", "bridge attach "+oldURL)
		attaching := func(level zapcore.Level) int {
			return h.logs.FilterMessage("attaching to the shared server").FilterLevelExact(level).Len()
		}
		for i, owner := range []int{7, 7, 8, 8} {
			refused := refusedBy(oldURL, time.Second)
			refused.Alone = i > 0
			h.m.BridgeFailedWith(refused)
			h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
			for h.m.State() == Alone {
				for len(h.rec.take()) == 0 {
					after(10 * time.Millisecond)
				}
				h.observe(Observation{Class: ClassLive, URL: oldURL, Owner: owner})
				synctest.Wait()
			}
			h.rec.take()
		}
		if info, debug := attaching(zapcore.InfoLevel), attaching(zapcore.DebugLevel); info != 2 || debug != 3 {
			t.Errorf("attaching said %d times at info, %d at debug: want the first and the other server's at info", info, debug)
		}
		// each server's refusal is warned of once
		if n := h.logs.FilterMessageSnippet("cannot use the shared server").FilterLevelExact(zapcore.WarnLevel).Len(); n != 2 {
			t.Errorf("the refusals were warned of %d times, want once for each server", n)
		}
	})
}

// A frozen server costs one busy grace: what the bridge's probes already
// waited counts toward the election's, so a bridge that gave up after the
// grace leaves an election that takes the lease over at its first busy
// judgement, and says why.
func TestAttached_ASilentServerIsNotWaitedForTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const grace = time.Second
		h := start(t, func(cfg *Config) { cfg.BusyGrace = grace })
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(BridgeFailure{Reason: "the shared server at " + oldURL + " has answered no probe for 1s", URL: oldURL, Silent: grace})
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassBusy, URL: oldURL, Reason: "silent", Opaque: "as-judged"})
		h.expect("take-over busy as-judged", "attempt")
		if n := h.logs.FilterMessageSnippet("waiting for the server").Len(); n != 0 {
			t.Errorf("a wait was said %d times", n)
		}
		credit := h.logs.FilterMessageSnippet("had answered no probe for 1s when this process's bridge gave up on it: that counts toward the busy grace (1s)").All()
		if len(credit) != 1 || credit[0].Level.String() != "info" {
			t.Errorf("the credit was said %d times: %q", len(credit), h.logged("info"))
		}
	})
}

// Silence short of the grace leaves the rest of it to wait, and is said
// with its end; a silence of another server counts for nothing.
func TestAttached_ASilenceCountsOnlyForItsServer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		busyAt string
		left   time.Duration
	}{{"the same server", oldURL, 600 * time.Millisecond}, {"another server", newURL, time.Second}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t, func(cfg *Config) { cfg.BusyGrace = time.Second })
				h.toAttached(oldURL)
				h.m.BridgeFailedWith(BridgeFailure{Reason: "silent", URL: oldURL, Silent: 400 * time.Millisecond})
				h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
				began := time.Now()
				busy := Observation{Class: ClassBusy, URL: tc.busyAt, Reason: "silent", Opaque: "as-judged"}
				h.observe(busy)
				h.expect() // waiting
				waits := h.logs.FilterMessageSnippet("waiting for the server").All()
				if len(waits) != 1 {
					t.Fatalf("the wait was said %d times", len(waits))
				}
				if until, _ := waits[0].ContextMap()["until"].(time.Time); !until.Equal(began.Add(tc.left)) {
					t.Errorf("waiting until %v, want %v", until, began.Add(tc.left))
				}
				for range tc.left / DefaultBindingPoll {
					time.Sleep(DefaultBindingPoll)
					h.expect("attempt")
					h.observe(busy)
				}
				h.expect("take-over busy as-judged", "attempt")
			})
		})
	}
}

func TestSilentSince(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	quiet := silence{url: oldURL, since: t0.Add(-time.Second)}
	for _, tc := range []struct {
		name  string
		since time.Time
		obs   Observation
		s     silence
		want  time.Time
	}{
		{"busy, its server", t0, Observation{Class: ClassBusy, URL: oldURL}, quiet, quiet.since},
		{"busy, another server", t0, Observation{Class: ClassBusy, URL: newURL}, quiet, t0},
		{"live", time.Time{}, Observation{Class: ClassLive, URL: oldURL}, quiet, time.Time{}},
		{"no silence", t0, Observation{Class: ClassBusy, URL: oldURL}, silence{}, t0},
		{"busy for longer already", t0.Add(-time.Hour), Observation{Class: ClassBusy, URL: oldURL}, quiet, t0.Add(-time.Hour)},
	} {
		if got := silentSince(tc.since, tc.obs, tc.s); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
