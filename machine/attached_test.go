package machine

import (
	"errors"
	"testing"
	"testing/synctest"
)

const (
	oldURL = "http://127.0.0.1:8741/mcp"
	newURL = "http://127.0.0.1:8742/mcp"
)

// failOver attaches to oldURL, then fails the bridge.
func (h *harness) failOver() {
	h.t.Helper()
	h.toAttached(oldURL)
	h.m.BridgeFailedWith(BridgeFailure{Reason: "the server at " + oldURL + " does not answer"})
	h.m.BridgeFailedWith(BridgeFailure{Reason: "the session was lost twice"}) // reported before Stop: ignored
	h.expect("bridge stop", "=> electing on bridge-failed", "attempt")
	line := "the server at " + oldURL + " does not answer; electing again"
	if w := h.logged("warn"); len(w) != 1 || w[0] != line {
		h.t.Fatalf("warn lines = %q, want %q", w, line)
	}
}

func TestAttached_BridgeFailedTakesOverCarryingTheSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.failOver()
		h.observe(Observation{Class: ClassStale, Reason: "the server it names does not answer", Opaque: 1})
		h.expect("take-over stale 1", "attempt")
		h.observe(Observation{Class: ClassWon})
		h.started(nil)
		h.expect("=> leaseholder on lease-won", "server start")
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left", "server stop", "release", "=> exited on sessions-changed")
	})
}

func TestAttached_BridgeFailedReattaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.failOver()
		h.observe(Observation{Class: ClassLive, URL: newURL})
		h.expect("=> attached on lease-live", "bridge attach "+newURL)
		h.m.Signal("SIGINT")
		h.expect("bridge stop", "=> exited on signal")
		h.exitsWith(Outcome{Signal: "SIGINT", Reason: "signal SIGINT"})
	})
}

func TestAttached_BridgeFailedServesAloneWhenNothingElseWorks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.failOver()
		h.observe(Observation{Class: ClassUnusable, Reason: "replacing it: read-only file system"})
		h.expect("=> alone on lease-unusable", "standalone: replacing it: read-only file system")
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

func TestAlone_ServeErrorIsLoggedAndTheMachineStays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Standalone.(*fakeStandalone).err = errors.New("loading the layer: no manifest")
		})
		h.observe(Observation{Class: ClassUnusable, Reason: "r"})
		h.expect("attempt", "=> alone on lease-unusable", "standalone: r")
		h.state(Alone)
		if e := h.logs.FilterMessage("cannot serve this client alone either").Len(); e != 1 {
			t.Errorf("error lines = %d, want 1", e)
		}
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
	})
}

// TestSignal_InEveryState: a signal ends every state with Outcome.Signal
// set, and only a leaseholder (owner-left included) releases the lease.
func TestSignal_InEveryState(t *testing.T) {
	for _, tc := range []struct {
		state State
		reach func(h *harness)
		want  []string
	}{
		// the attempt in flight then ends as a late win: released, not kept
		{Electing, func(h *harness) { h.expect("attempt") },
			[]string{"=> exited on signal", "release"}},
		{Leaseholder, (*harness).toLeaseholder,
			[]string{"server stop", "release", "=> exited on signal"}},
		{OwnerLeft, func(h *harness) {
			h.toLeaseholder()
			h.m.SessionsChanged(1)
			h.m.ClientLeft()
			h.expect("=> owner-left on client-left")
		}, []string{"server stop", "release", "=> exited on signal"}},
		{Attached, func(h *harness) { h.toAttached(oldURL) },
			[]string{"bridge stop", "=> exited on signal"}},
		{LeaseLost, func(h *harness) {
			h.toLeaseholder()
			h.m.SessionsChanged(1) // a session keeps it in lease-lost, its client gone
			h.m.ClientLeft()
			h.m.LeaseReplaced("replaced")
			h.expect("=> owner-left on client-left", "=> lease-lost on lease-replaced", "server lose-lease: replaced")
		}, []string{"=> exited on signal", "server stop"}},
		{Alone, func(h *harness) {
			h.observe(Observation{Class: ClassUnusable, Reason: "r"})
			h.expect("attempt", "=> alone on lease-unusable", "standalone: r")
		}, []string{"=> exited on signal"}},
	} {
		t.Run(string(tc.state), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				tc.reach(h)
				h.state(tc.state)
				h.m.Signal("SIGTERM")
				h.expect(tc.want...)
				h.exitsWith(Outcome{Signal: "SIGTERM", Reason: "signal SIGTERM"})
			})
		})
	}
}

func TestUnhandledTrigger_LogsAWarningAndChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.m.LeaseReplaced("gone") // nobody expects it while electing
		h.state(Electing)
		entries := h.logs.FilterMessage("unhandled trigger").All()
		if len(entries) != 1 {
			t.Fatalf("unhandled lines = %d, want 1", len(entries))
		}
		if f := entries[0].ContextMap(); f["trigger"] != "lease-replaced" {
			t.Errorf("fields = %v, want trigger lease-replaced", f)
		}
		h.toAttached(oldURL) // still works
		h.m.ClientLeft()
		h.expect("bridge stop", "=> exited on client-left")
	})
}

func TestTransition_IsLoggedOnceWithItsRulePoint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.Signal("SIGTERM")
		h.outcome()
		var got []map[string]any
		for _, e := range h.logs.FilterMessage("transition").All() {
			if e.Level.String() != "info" {
				t.Errorf("transition logged at %s", e.Level)
			}
			got = append(got, e.ContextMap())
		}
		want := []map[string]any{
			{"from": "electing", "to": "leaseholder", "trigger": "lease-won", "rule": "R7"},
			{"from": "leaseholder", "to": "exited", "trigger": "signal", "rule": "R4"},
		}
		if len(got) != len(want) {
			t.Fatalf("transition lines = %v, want %v", got, want)
		}
		for i := range want {
			for k, v := range want[i] {
				if got[i][k] != v {
					t.Errorf("line %d: %s = %v, want %v", i, k, got[i][k], v)
				}
			}
		}
	})
}

func TestTransition_RuleOfAnInheritedEdge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var rules []Rule
		h := start(t, func(cfg *Config) {
			next := cfg.OnTransition
			cfg.OnTransition = func(tr Transition) { rules = append(rules, tr.Rule); next(tr) }
		})
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.ClientLeft()
		h.m.Signal("SIGTERM") // configured on leaseholder, fired in owner-left
		h.outcome()
		if want := []Rule{R7, R5, R4}; len(rules) != 3 || rules[0] != want[0] || rules[1] != want[1] || rules[2] != want[2] {
			t.Errorf("rules = %q, want %q", rules, want)
		}
	})
}

func TestRun_AbandonedReleasesOnlyAsLeaseholder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.cancel()
		h.expect("server stop", "release")
		h.exitsWith(Outcome{Reason: "abandoned: context canceled"})
	})
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toAttached(oldURL)
		h.cancel()
		h.expect("bridge stop")
		h.exitsWith(Outcome{Reason: "abandoned: context canceled"})
	})
}

func TestRun_InputsBeforeRunAndAfterItReturned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := New(Config{Election: &fakeElection{rec: &recorder{}}, Server: &fakeServer{},
			Bridge: &fakeBridge{}, Standalone: &fakeStandalone{}})
		if err != nil {
			t.Fatal(err)
		}
		m.Signal("SIGHUP") // before Run: kept, and handled first
		if out := m.Run(t.Context()); out.Signal != "SIGHUP" {
			t.Errorf("outcome = %+v, want signal SIGHUP", out)
		}
		m.ClientLeft() // after: dropped, never blocks
		if out := m.Run(t.Context()); out.Reason != "machine: Run called twice" {
			t.Errorf("second Run = %+v", out)
		}
	})
}
