package machine

import (
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zapcore"
)

// Alone is a detour (R2): a process served alone keeps trying to share, on
// its own clock, and joins as soon as an attempt finds a way.

// toAlone serves the client alone for an unusable lease.
func (h *harness) toAlone(reason string) {
	h.t.Helper()
	h.observe(Observation{Class: ClassUnusable, Reason: reason})
	h.expect("attempt", "=> alone on lease-unusable", "standalone: "+reason)
}

// after lets d pass on the bubble's clock.
func after(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func TestAlone_TriesAgainOnABackoffAndAttachesToALiveServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("the lease directory is a file")
		after(DefaultJoinRetry - time.Millisecond)
		h.expect() // not before its turn
		after(time.Millisecond)
		h.expect("attempt")
		h.observe(Observation{Class: ClassUnusable, Reason: "still a file"})
		h.expect()
		after(2*DefaultJoinRetry - time.Millisecond)
		h.expect() // the wait doubled
		after(time.Millisecond)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL})
		h.expect("=> attached on lease-live", "bridge attach "+newURL)
		if n := h.logs.FilterMessage("still serving this client alone: still a file; trying to share again in 2s").Len(); n != 1 {
			t.Errorf("lines saying why it is still alone = %d, want 1", n)
		}
	})
}

// A try that finds the live server full by its own word (its identity
// says so) does not attach: carrying the client's session there would
// hold the client's calls, only to be refused. It tries again on its
// turn, and attaches once the server has room.
func TestAlone_AServerThatSaysItIsFullIsNotAttached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("the lease directory is a file")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL, Full: true})
		h.expect()
		if n := h.logs.FilterMessage("still serving this client alone: the shared server at " + newURL + " is full; trying to share again in 2s").Len(); n != 1 {
			t.Errorf("lines saying the server is full = %d, want 1", n)
		}
		after(2 * DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: newURL})
		h.expect("=> attached on lease-live", "bridge attach "+newURL)
	})
}

func TestAlone_TheWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("r")
		waited := []time.Duration{}
		for range 6 {
			start := time.Now()
			for len(h.rec.take()) == 0 {
				after(100 * time.Millisecond)
			}
			waited = append(waited, time.Since(start).Round(100*time.Millisecond))
			h.observe(Observation{Class: ClassUnusable, Reason: "r"})
		}
		want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
		for i := range want {
			if waited[i] != want[i] {
				t.Fatalf("waits = %v, want %v", waited, want)
			}
		}
		if n := len(h.logged("info")); n > 6 {
			t.Errorf("info lines = %d: a reason that does not change is said once", n)
		}
	})
}

func TestAlone_ALeaseChangeTriesAtOnceButNeverTwiceASecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.Election.(*fakeElection).changes = make(chan struct{}) })
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassUnusable, Reason: "r"})
		after(300 * time.Millisecond)
		h.el.changes <- struct{}{}
		after(0)
		h.expect() // the last try was 300ms ago
		after(DefaultJoinRetry - 300*time.Millisecond)
		h.expect("attempt")
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		after(5 * time.Second)
		h.expect("attempt") // a change long after the last try: at once
		h.el.changes <- struct{}{}
		after(0)
		h.expect() // an attempt in flight is newer than the change
		h.observe(Observation{Class: ClassWon})
		h.expect("=> leaseholder on lease-won", "server start")
	})
}

// A change of the lease while a try runs may come after the try read it:
// the next try comes as soon as the least time between tries allows, not
// after the whole backoff (8 s here).
func TestAlone_ALeaseChangeDuringATryBringsTheNextOneSoon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.Election.(*fakeElection).changes = make(chan struct{}) })
		h.toAlone("r")
		for _, wait := range []time.Duration{1, 2, 4, 8} {
			after(wait * time.Second)
			h.expect("attempt")
			if wait < 8 {
				h.observe(Observation{Class: ClassUnusable, Reason: "r"})
			}
		}
		after(500 * time.Millisecond) // the try probes a silent server
		h.el.changes <- struct{}{}    // the lease taken over meanwhile
		after(0)
		h.expect()
		after(500 * time.Millisecond)
		h.observe(Observation{Class: ClassBusy, Reason: "silent", URL: newURL})
		after(0)
		h.expect("attempt") // the last try began a second ago
		h.observe(Observation{Class: ClassUnusable, Reason: "r"})
		after(DefaultJoinRetry - time.Millisecond)
		h.expect() // the backoff starts over, from its shortest wait
		after(time.Millisecond)
		h.expect("attempt")
	})
}

func TestAlone_AnUnusableLeaseIsTakenOverAndWon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassCorrupt, Reason: "not JSON", Opaque: 7})
		h.expect("take-over corrupt 7", "attempt")
		h.observe(Observation{Class: ClassWon})
		h.started(nil)
		h.expect("=> leaseholder on lease-won", "server start")
		h.state(Leaseholder)
	})
}

// A take-over whose lock another process holds through the wait (stopped
// in its critical section, say) waits its turn, as a lease being written
// does: a client served alone does not try again and again meanwhile.
func TestAlone_AContendedTakeOverWaitsItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Election.(*fakeElection).takeOverErr = fmt.Errorf("%w: lock held (waited 2s)", ErrContended)
		})
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassStale, Reason: "silent, owner gone", Opaque: 7})
		h.expect("take-over stale 7")
		after(2*DefaultJoinRetry - time.Millisecond)
		h.expect() // the wait doubled, as after any try that found no way
		after(time.Millisecond)
		h.expect("attempt")
	})
}

// A client that cannot be served alone either still tries to share: a
// bridge needs no layer of its own, and the cause may pass.
func TestAlone_AClientThatCannotBeServedKeepsTryingToShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.Standalone.(*fakeStandalone).err = errors.New("loading the layer: no manifest") })
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:9"})
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:9")
		h.state(Attached)
	})
}

func TestAlone_LeavingStopsTheTries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.m.ClientLeft()
		h.expect("=> exited on client-left", "release") // what the cancelled attempt may have created
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// A try from alone whose bridge fails before it took the client over
// never holds the client in an election: the process is alone again at
// once, with the bridge's reason, and tries again in its turn.
func TestAlone_ATryWhoseBridgeFailsIsAloneAgainAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAlone("r")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: oldURL})
		h.expect("=> attached on lease-live", "bridge attach "+oldURL)
		h.m.BridgeFailedWith(BridgeFailure{Reason: "unreachable", URL: oldURL, Alone: true})
		h.expect("bridge stop", "=> alone on bridge-failed", "standalone: unreachable")
		after(DefaultJoinRetry)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: oldURL})
		h.expect("=> attached on lease-live", "bridge attach "+oldURL)
	})
}

// One detour through alone warns of each reason once: a full server that
// refuses the bridge again, after tries that found the lease otherwise,
// and a bridge that fails the same way on every try while the client is
// still alone, are said again only at debug.
func TestAlone_EachReasonIsWarnedOfOncePerDetour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.JoinRetry = 100 * time.Millisecond })
		tries := func(obs Observation, until func() bool) {
			for !until() {
				for len(h.rec.take()) == 0 {
					after(10 * time.Millisecond)
				}
				h.observe(obs)
				synctest.Wait()
			}
			h.rec.take()
		}
		failed := func(f BridgeFailure) {
			f.URL, f.Alone = oldURL, true
			h.m.BridgeFailedWith(f)
			synctest.Wait()
			h.rec.take()
		}
		attached := func() bool { return h.m.State() != Alone }
		h.toAttached(oldURL)
		h.m.BridgeFailedWith(refusedBy(oldURL, time.Millisecond))
		h.expect("bridge stop", "=> alone on bridge-failed", "standalone: "+fullReasonText)
		refused := time.Now()
		tries(Observation{Class: ClassBinding, URL: oldURL, Reason: "its owner binds"}, func() bool { return time.Since(refused) > time.Second })
		tries(Observation{Class: ClassLive, URL: oldURL}, attached)
		failed(BridgeFailure{Reason: fullReasonText, Full: true, RetryAfter: time.Millisecond})
		for range 3 {
			tries(Observation{Class: ClassLive, URL: oldURL}, attached)
			failed(BridgeFailure{Reason: "carrying the client's session: the server answered 500"})
		}
		var warned []string
		for _, l := range h.logs.FilterMessageSnippet("cannot use the shared server").FilterLevelExact(zapcore.WarnLevel).All() {
			warned = append(warned, l.Message)
		}
		if len(warned) != 2 {
			t.Errorf("one detour through alone warned %d times, want twice (full, then the replay's failure): %q", len(warned), warned)
		}
	})
}

// A client shared again, even for a moment (a try won the lease and its
// server served, then lost the lease before the machine heard it start),
// is on a new detour when it is alone again: it is warned of once more.
func TestAlone_ALeaseLostBeforeTheServerWasHeardEndsTheDetour(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.JoinRetry = 100 * time.Millisecond })
		h.toAlone("r")
		for len(h.rec.take()) == 0 {
			after(10 * time.Millisecond)
		}
		h.observe(Observation{Class: ClassWon})
		synctest.Wait()
		h.m.LeaseReplaced("taken over")
		heard := make(chan struct{})
		go func() { // Start returned, heard after the loss (or the loss cancelled it first)
			defer close(heard)
			select {
			case h.srv.results <- nil:
			case <-time.After(time.Second):
			}
		}()
		synctest.Wait()
		h.state(Electing)
		h.observe(Observation{Class: ClassUnusable, Reason: "r"})
		synctest.Wait()
		if n := h.logs.FilterMessageSnippet("cannot use the shared server").FilterLevelExact(zapcore.WarnLevel).Len(); n != 2 {
			t.Errorf("two detours through alone warned %d times, want twice", n)
		}
		<-heard
	})
}
