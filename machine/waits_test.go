package machine

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

const fullReasonText = "the shared server at " + oldURL + " is full (2 sessions)"

// refusedBy is the bridge's report of a full server that asks for retry.
func refusedBy(url string, retry time.Duration) BridgeFailure {
	return BridgeFailure{Reason: "the shared server at " + url + " is full (2 sessions)", URL: url, Full: true, RetryAfter: retry}
}

// A full server is waited for as it asks, and attached to again only
// then; the election bound counts from its first refusal however often
// the client re-attaches, and past it the client is served alone with the
// server's reason. Re-attaching costs one attempt per Retry-After: no spin.
func TestAttached_AFullServerIsWaitedForAsItAsksThenServedAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAttached(oldURL)
		const retry = 6 * time.Second // refused at 0, 6, 12 and 18 s
		attaches := 1
		for at := time.Duration(0); at < DefaultElectionBound; at += retry {
			h.m.BridgeFailedWith(refusedBy(oldURL, retry))
			h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
			h.observe(Observation{Class: ClassLive, URL: oldURL})
			h.expect() // not attached again before it asked
			if at+retry >= DefaultElectionBound {
				break
			}
			time.Sleep(retry - time.Millisecond)
			h.expect()
			time.Sleep(time.Millisecond)
			h.expect("attempt")
			h.observe(Observation{Class: ClassLive, URL: oldURL})
			h.expect("=> attached on lease-live", "bridge attach "+oldURL)
			attaches++
		}
		time.Sleep(2 * time.Second) // to 20 s after the first refusal
		reason := fullReasonText + ", and had no room for this client within 20s"
		h.expect("=> alone on election-timed-out", "standalone: "+reason)
		if attaches != 4 {
			t.Errorf("attached %d times in 20 s, want 4: once, then once per Retry-After", attaches)
		}
		waits := h.logs.FilterMessageSnippet(fullReasonText + "; waiting 6s, as it asks").All()
		if len(waits) != 4 || waits[0].Level.String() != "info" {
			t.Fatalf("the waits were said %d times, want once per refusal: %q", len(waits), h.logged("info"))
		}
		for _, w := range h.logged("warn") {
			if strings.Contains(w, "shutting down") {
				t.Errorf("a full server was said to be shutting down: %q", w)
			}
		}
	})
}

// However little a full server asks, it is not tried more often than
// twice a second; one that does not say is tried again after a second.
func TestAttached_AFullServerIsNeverTriedInASpin(t *testing.T) {
	for _, tc := range []struct {
		asked, waited time.Duration
	}{{time.Millisecond, fullWaitFloor}, {0, fullWaitDefault}} {
		synctest.Test(t, func(t *testing.T) {
			h := start(t)
			h.toAttached(oldURL)
			h.m.BridgeFailedWith(refusedBy(oldURL, tc.asked))
			h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
			h.observe(Observation{Class: ClassLive, URL: oldURL})
			time.Sleep(tc.waited - time.Millisecond)
			h.expect()
			time.Sleep(time.Millisecond)
			h.expect("attempt")
		})
	}
}

// The wait on a full server ends when another server holds the lease, and
// any other failure ends its run: the next election has its own bound.
func TestAttached_AFullServersRunEndsWithIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(refusedBy(oldURL, 5*time.Second))
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL}) // another server now
		h.expect("=> attached on lease-live", "bridge attach "+newURL)

		time.Sleep(15 * time.Second)
		h.m.BridgeFailedWith(refusedBy(newURL, time.Second))
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL})
		time.Sleep(time.Second)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL})
		h.expect("=> attached on lease-live", "bridge attach "+newURL)
		h.m.BridgeFailed("the shared server at " + newURL + " is unreachable") // not full: the run ends
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		time.Sleep(DefaultElectionBound - time.Millisecond) // a bound of its own, from now
		h.rec.take()                                        // the binding polls
		h.state(Electing)
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

func TestNextFull(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	bound := 20 * time.Second
	var run fullRun
	for _, step := range []struct {
		at        time.Duration
		f         BridgeFailure
		wantSince time.Duration // -1: no run
	}{
		{0, refusedBy(oldURL, 5*time.Second), 0},
		{6 * time.Second, refusedBy(oldURL, 5*time.Second), 0},
		{26 * time.Second, refusedBy(oldURL, 5*time.Second), 0},                // 20 s after the last: still the run
		{47 * time.Second, refusedBy(oldURL, 5*time.Second), 47 * time.Second}, // 21 s: served meanwhile, a new run
		{48 * time.Second, refusedBy(newURL, 5*time.Second), 48 * time.Second}, // another server
		{49 * time.Second, BridgeFailure{Reason: "gone", URL: newURL}, -1},
	} {
		now := t0.Add(step.at)
		run = nextFull(run, step.f, now, bound)
		switch {
		case step.wantSince < 0:
			if run != (fullRun{}) {
				t.Errorf("at %s: run %+v, want none", step.at, run)
			}
		case !run.since.Equal(t0.Add(step.wantSince)) || run.url != step.f.URL || run.reason != step.f.Reason || !run.retryAt.Equal(now.Add(5*time.Second)):
			t.Errorf("at %s: run %+v, want since %s", step.at, run, step.wantSince)
		}
	}
}

func TestElectionEnds(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	bound := 20 * time.Second
	run := fullRun{url: oldURL, since: t0, last: t0.Add(12 * time.Second)}
	for _, tc := range []struct {
		at   time.Duration
		run  fullRun
		want time.Duration
	}{
		{5 * time.Second, fullRun{}, 25 * time.Second},
		{13 * time.Second, run, 20 * time.Second}, // from the first refusal
		{25 * time.Second, run, 20 * time.Second}, // already past: at once
		{33 * time.Second, run, 53 * time.Second}, // the run is over
	} {
		if got := electionEnds(t0.Add(tc.at), bound, tc.run); !got.Equal(t0.Add(tc.want)) {
			t.Errorf("at %s: ends %v, want %v", tc.at, got, t0.Add(tc.want))
		}
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

// A wait on a full server is said once: a change of the lease read again
// meanwhile (the watch's first report of it, say) finds the same server
// still asking to be left alone, and the wait goes on unsaid.
func TestElecting_AWaitOnAFullServerIsSaidOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(refusedBy(oldURL, 6*time.Second))
		h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
		h.observe(Observation{Class: ClassLive, URL: oldURL})
		h.expect()
		h.m.LeaseChanged()
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: oldURL})
		h.expect() // still not attached before it asked
		if waits := h.logs.FilterMessageSnippet(fullReasonText + "; waiting").All(); len(waits) != 1 {
			t.Fatalf("one wait was said %d times: %q", len(waits), h.logged("info"))
		}
	})
}
