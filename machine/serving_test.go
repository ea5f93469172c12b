package machine

import (
	"errors"
	"slices"
	"testing"
	"testing/synctest"

	"go.uber.org/zap"
)

func TestLeaseholder_ServerStartFailedReleasesAndServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassWon})
		h.started(errors.New("binding 127.0.0.1:8741: address in use"))
		reason := "starting the shared server: binding 127.0.0.1:8741: address in use"
		h.expect("attempt", "=> leaseholder on lease-won", "server start",
			"release", "=> alone on server-start-failed", "standalone: "+reason)
		h.m.ClientLeft()
		h.expect("=> exited on client-left") // no server to stop
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// A server that cannot start, try after try, is said once at warn: each
// try from alone wins the lease again and fails as the last one did.
func TestLeaseholder_AServerThatNeverStartsIsWarnedOfOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		reason := "starting the shared server: binding 10.255.255.1:8741: cannot assign requested address"
		for try := range 4 {
			if try > 0 {
				after(DefaultJoinRetry << (try - 1)) // its turn, each wait twice the last
			}
			h.observe(Observation{Class: ClassWon})
			h.started(errors.New("binding 10.255.255.1:8741: cannot assign requested address"))
			h.expect("attempt", "=> leaseholder on lease-won", "server start", "release", "=> alone on server-start-failed", "standalone: "+reason)
		}
		if n := h.logs.FilterMessageSnippet("cannot use the shared server").FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
			t.Errorf("%d warnings that the shared server cannot be used, want 1", n)
		}
	})
}

func TestLeaseholder_OwnerLeftServesUntilTheLastSessionEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(2)
		h.m.LeaseChanged()
		h.expect()
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left")
		h.m.SessionsChanged(1)
		h.m.ClientLeft() // stdin EOF, then the parent's death: ignored
		h.expect()
		h.state(OwnerLeft)
		h.m.SessionsChanged(0)
		h.expect("server stop", "release", "=> exited on sessions-changed")
		h.exitsWith(Outcome{Reason: "the last session ended"})
		if w := h.logged("warn"); len(w) != 0 {
			t.Errorf("warn lines = %q, want none", w)
		}
	})
}

func TestLeaseholder_OwnerLeftWithNoSessionsExitsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left", "server stop", "release", "=> exited on sessions-changed")
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}

// A lease-lost server whose own client has left keeps its sessions and
// ends with the last; it never elects again, having no client (R6).
func TestLeaseLost_WithoutItsClientKeepsItsSessionsAndNeverElectsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.ClientLeft()
		h.m.LeaseReplaced("replaced by pid 77")
		h.expect("=> owner-left on client-left", "=> lease-lost on lease-replaced", "server lose-lease: replaced by pid 77")
		if got := h.logs.FilterMessage("the lease is no longer this server's: replaced by pid 77; serving the sessions it has and ending with them").Len(); got != 1 {
			t.Errorf("lease-lost lines = %d, want 1", got)
		}

		// Expected no-ops, and one fact no lease-lost process expects: none
		// of them elects again.
		h.m.LeaseReplaced("gone")
		h.m.LeaseChanged()
		h.m.ClientLeft() // the parent's death after stdin's end
		h.m.SessionsChanged(2)
		h.m.BridgeFailedWith(BridgeFailure{Reason: "?"})
		h.expect()
		h.state(LeaseLost)
		if w := h.logged("warn"); len(w) != 2 || w[1] != "unhandled trigger" {
			t.Errorf("warn lines = %q, want the lease-lost line and one unhandled trigger", w)
		}

		h.m.SessionsChanged(0)                                   // the last one ended, or the server expired it idle
		h.expect("=> exited on sessions-changed", "server stop") // no release
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}

// A lease-lost server hands its own client over at once, whatever sessions
// it still has: an election finds the current server (convergence), and
// the server drains them alone. The lease is not touched, and the old
// server's count is the machine's no more: a new term of this process's
// ends as soon as its own client leaves.
func TestLeaseLost_HandsItsClientOverAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.LeaseReplaced("corrupt")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: corrupt",
			"server hand-over", "=> electing on hand-over", "attempt")
		h.m.SessionsChanged(1) // posted by the old server before it was handed over
		h.expect()
		h.observe(Observation{Class: ClassWon})
		h.started(nil)
		h.expect("=> leaseholder on lease-won", "server start")
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left", "server stop", "release", "=> exited on sessions-changed")
		h.exitsWith(Outcome{Reason: "the last session ended"})
		if w := h.logged("warn"); slices.Contains(w, "unhandled trigger") {
			t.Errorf("warn lines = %q", w)
		}
	})
}

// A client handed over is bridged like any other, and the process ends
// with it: the old server is not the machine's to stop.
func TestLeaseLost_AHandedOverClientAttaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(3)
		h.m.LeaseReplaced("corrupt")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: corrupt",
			"server hand-over", "=> electing on hand-over", "attempt")
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:9"})
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:9")
		h.m.ClientLeft()
		h.expect("bridge stop", "=> exited on client-left") // no release: the lease is another's
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// A lease lost before the server even started (taken over while binding)
// leaves no session: the client is handed over at once, the start is
// cancelled, and its result means nothing.
func TestLeaseLost_WhileStartingHandsTheClientOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassWon})
		h.expect("attempt", "=> leaseholder on lease-won", "server start")
		h.m.LeaseReplaced("taken over while binding")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: taken over while binding",
			"server hand-over", "=> electing on hand-over", "attempt")
		h.state(Electing)
		if w := h.logged("warn"); slices.Contains(w, "unhandled trigger") {
			t.Errorf("warn lines = %q", w)
		}
	})
}
