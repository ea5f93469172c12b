package machine

import (
	"errors"
	"testing"
	"testing/synctest"
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

func TestLeaseholder_OwnerLeftServesUntilTheLastSessionEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(2)
		h.m.IdleTimeout() // own client still here: ignored
		h.m.LeaseChanged()
		h.expect()
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left")
		h.m.SessionsChanged(1)
		h.m.ClientLeft() // stdin EOF, then the parent's death: ignored
		h.expect()
		h.state(OwnerLeft)
		h.m.SessionsChanged(0)
		h.expect("release", "=> exited on sessions-changed", "server stop")
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
		h.expect("=> owner-left on client-left", "release", "=> exited on sessions-changed", "server stop")
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}

func TestLeaseholder_OwnerLeftEndsAtTheIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(3)
		h.m.ClientLeft()
		h.expect("=> owner-left on client-left")
		h.m.IdleTimeout()
		h.expect("release", "=> exited on idle-timeout", "server stop")
		h.exitsWith(Outcome{Reason: "the remaining sessions were idle past the idle timeout"})
	})
}

func TestLeaseLost_KeepsItsSessionsAndNeverElectsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.LeaseReplaced("replaced by pid 77")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: replaced by pid 77")
		if got := h.logs.FilterMessage("the lease is no longer this server's: replaced by pid 77; serving the sessions it has and ending with them").Len(); got != 1 {
			t.Errorf("lease-lost lines = %d, want 1", got)
		}

		// Expected no-ops, and one fact no lease-lost process expects: none
		// of them elects again.
		h.m.LeaseReplaced("gone")
		h.m.LeaseChanged()
		h.m.IdleTimeout() // own client still here
		h.m.ClientLeft()  // a session remains
		h.m.BridgeFailed("?")
		h.expect()
		h.state(LeaseLost)
		if w := h.logged("warn"); len(w) != 2 || w[1] != "unhandled trigger" {
			t.Errorf("warn lines = %q, want the lease-lost line and one unhandled trigger", w)
		}

		h.m.SessionsChanged(0)
		h.expect("=> exited on sessions-changed", "server stop") // no release
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}

func TestLeaseLost_FromOwnerLeftEndsWithTheLastSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.ClientLeft()
		h.m.LeaseReplaced("empty")
		h.expect("=> owner-left on client-left", "=> lease-lost on lease-replaced", "server lose-lease: empty")
		h.m.IdleTimeout() // own client gone, the rest idle: ends
		h.expect("=> exited on idle-timeout", "server stop")
		h.exitsWith(Outcome{Reason: "the remaining sessions were idle past the idle timeout"})
	})
}

func TestLeaseLost_OwnClientLeavingLastEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.m.LeaseReplaced("corrupt")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: corrupt")
		h.m.ClientLeft()
		h.expect("=> exited on client-left", "server stop")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

func TestLeaseLost_ServerThatNeverStartedServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassWon})
		h.expect("attempt", "=> leaseholder on lease-won", "server start")
		h.m.LeaseReplaced("taken over while binding")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: taken over while binding")
		h.started(errors.New("publishing the URL: not our lease"))
		h.expect("=> alone on server-start-failed", "standalone: starting the shared server: publishing the URL: not our lease")
		h.m.Signal("SIGTERM")
		h.expect("=> exited on signal")
		h.exitsWith(Outcome{Signal: "SIGTERM", Reason: "signal SIGTERM"})
	})
}

func TestLeaseLost_ServerStartedLateIsIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassWon})
		h.expect("attempt", "=> leaseholder on lease-won", "server start")
		h.m.LeaseReplaced("gone")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: gone")
		h.started(nil)
		h.expect()
		h.state(LeaseLost)
		if w := h.logged("warn"); len(w) != 1 {
			t.Errorf("warn lines = %q, want only the lease-lost line", w)
		}
		h.m.ClientLeft()
		h.expect("=> exited on client-left", "server stop")
	})
}
