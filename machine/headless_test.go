package machine

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// headless is the configuration of `serve`: no stdio client of its own.
func headlessConfig(cfg *Config) { cfg.Headless = true }

// A headless process that finds a server running leaves it to that server:
// nothing is attached, and the machine ends in good order.
func TestHeadless_ALiveServerEndsItWithoutAttaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:9"})
		h.expect("attempt", "=> exited on lease-live")
		h.exitsWith(Outcome{Reason: "a shared server already runs at http://127.0.0.1:9"})
		if h.logs.FilterMessage("a shared server for this checkout is already running at http://127.0.0.1:9; not starting a second one").Len() != 1 {
			t.Error("the process did not say where the server runs")
		}
	})
}

// A headless process that cannot share has no client to serve alone: it
// fails, with the reason.
func TestHeadless_AnUnusableLeaseIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.observe(Observation{Class: ClassUnusable, Reason: "read-only"})
		h.expect("attempt", "=> exited on lease-unusable")
		h.exitsWith(Outcome{Reason: "cannot run the shared server: read-only", Failure: "read-only"})
	})
}

func TestHeadless_AnElectionOutOfTimeIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		time.Sleep(DefaultBindingPoll)
		h.expect("attempt", "attempt") // the second stays in flight
		time.Sleep(DefaultElectionBound - DefaultBindingPoll)
		// the attempt cancelled then ends as a late win, whose lease is released
		h.expect("=> exited on election-timed-out", "release")
		reason := "no usable lease within 20s (last seen: binding lease: no URL yet)"
		h.exitsWith(Outcome{Reason: "cannot run the shared server: " + reason, Failure: reason})
	})
}

// A server that does not start gives the lease back, and the headless
// process fails rather than serve nobody alone.
func TestHeadless_AServerThatDoesNotStartIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.observe(Observation{Class: ClassWon})
		h.started(errors.New("address in use"))
		h.expect("attempt", "=> leaseholder on lease-won", "server start", "release", "=> exited on server-start-failed")
		h.exitsWith(Outcome{Reason: "cannot run the shared server: starting the shared server: address in use", Failure: "starting the shared server: address in use"})
	})
}

// A headless leaseholder serves until a signal; once its lease is lost it
// ends with its last session, since it has no client to wait for.
func TestHeadless_ALostLeaseEndsWithTheLastSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.toLeaseholder()
		h.m.SessionsChanged(1)
		h.m.SessionsChanged(0)
		h.expect() // serving others, until a signal
		h.m.SessionsChanged(1)
		h.m.LeaseReplaced("taken over")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: taken over")
		h.m.SessionsChanged(0)
		h.expect("=> exited on sessions-changed", "server stop")
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}

func TestHeadless_ALostLeaseWithoutSessionsEndsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, headlessConfig)
		h.toLeaseholder()
		h.m.LeaseReplaced("taken over")
		h.expect("=> lease-lost on lease-replaced", "server lose-lease: taken over", "=> exited on sessions-changed", "server stop")
		h.exitsWith(Outcome{Reason: "the last session ended"})
	})
}
