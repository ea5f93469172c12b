package machine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
)

func TestElecting_WonStartsTheServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.toLeaseholder()
		h.state(Leaseholder)
		h.m.Signal("SIGTERM")
		h.expect("server stop", "release", "=> exited on signal")
	})
}

func TestElecting_TakesOverEachUnusableClassThenWins(t *testing.T) {
	for _, c := range []Class{ClassStale, ClassCorrupt, ClassEmpty, ClassAbandoned, ClassSuperseded} {
		t.Run(string(c), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := start(t)
				h.observe(Observation{Class: c, Reason: "the reason", Opaque: "as-judged"})
				h.expect("attempt", "take-over "+string(c)+" as-judged", "attempt")
				h.state(Electing)

				warn := h.logs.FilterMessage(string(c) + " lease: the reason; taking it over").All()
				if len(warn) != 1 {
					t.Fatalf("take-over lines = %d, want 1; warn lines: %q", len(warn), h.logged("warn"))
				}
				if f := warn[0].ContextMap(); f["lease"] != testLease || f["class"] != string(c) {
					t.Errorf("take-over fields = %v, want lease and class", f)
				}

				h.observe(Observation{Class: ClassWon})
				h.started(nil)
				h.expect("=> leaseholder on lease-won", "server start")
				h.m.Signal("SIGINT")
				h.expect("server stop", "release", "=> exited on signal")
			})
		})
	}
}

func TestElecting_TakeOverThatFailsServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Election.(*fakeElection).takeOverErr = errors.New("lock: permission denied")
		})
		h.observe(Observation{Class: ClassCorrupt, Reason: "not JSON"})
		h.expect("attempt", "take-over corrupt <nil>",
			"=> alone on lease-unusable",
			"standalone: taking over the corrupt lease: lock: permission denied")
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// A take-over waiting for the sidecar lock (held by a process stopped in
// its critical section) holds its attempt, never the machine: the client's
// leaving is heard at once, and the process exits.
func TestElecting_AWaitingTakeOverHoldsNothingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Election.(*fakeElection).takeOverWaits = true
		})
		h.observe(Observation{Class: ClassStale, Reason: "silent, owner gone"})
		h.expect("attempt", "take-over stale <nil>")
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

func TestElecting_BusyWaitsForThePollThenAttachesToLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassBusy, Reason: "owner alive, URL silent"})
		h.expect("attempt")
		time.Sleep(DefaultBindingPoll - time.Millisecond)
		h.expect() // still waiting
		time.Sleep(time.Millisecond)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:8741/mcp"})
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:8741/mcp")
		h.m.ClientLeft()
		h.expect("bridge stop", "=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// Another process created the lease between this attempt's read and its
// create: the next attempt reads the winner's lease at once, without
// waiting for a change or the poll.
func TestElecting_OutracedAttemptsAgainAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassOutraced, Reason: "another process created the lease first"})
		h.expect("attempt", "attempt")
		if got := h.logs.FilterMessage("another process created the lease first; reading its lease").Len(); got != 1 {
			t.Errorf("the race was logged %d times, want once", got)
		}
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:9"}) // the winner's server
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:9")
	})
}

func TestElecting_BindingAttemptsAgainWhenTheLeaseChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		h.expect("attempt")
		h.m.LeaseChanged()
		h.expect("attempt") // at once, not after the poll
		time.Sleep(time.Second)
		h.m.LeaseChanged() // an attempt is in flight: ignored, not unhandled
		h.expect()
		if w := h.logged("warn"); len(w) != 0 {
			t.Errorf("warn lines = %q, want none", w)
		}
		h.observe(Observation{Class: ClassWon})
		h.started(nil)
		h.expect("=> leaseholder on lease-won", "server start")
		h.m.Signal("SIGHUP")
		h.expect("server stop", "release", "=> exited on signal")
	})
}

// A client waits while the lease is binding: the wait is said at info once,
// with whose process and until when, however many attempts it takes; a
// wait on another owner is said again.
func TestElecting_AWaitIsLoggedOnceWithItsOwnerAndDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		began := time.Now()
		binding := Observation{Class: ClassBinding, Reason: "no URL yet", Owner: 4242, Grace: 5 * time.Second}
		for range 3 {
			h.observe(binding)
			h.expect("attempt")
			time.Sleep(DefaultBindingPoll)
		}
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet", Owner: 4343, Grace: 5 * time.Second})
		h.expect("attempt")
		waits := h.logs.FilterMessageSnippet("waiting for the lease's owner").All()
		if len(waits) != 2 {
			t.Fatalf("the waits were logged %d times, want once per owner: %q", len(waits), h.logged("info"))
		}
		f := waits[0].ContextMap()
		if waits[0].Level.String() != "info" || f["owner_pid"] != int64(4242) || f["class"] != "binding" || f["lease"] != testLease {
			t.Errorf("the first wait: %s %q %v", waits[0].Level, waits[0].Message, f)
		}
		if until, _ := f["until"].(time.Time); !until.Equal(began.Add(5 * time.Second)) {
			t.Errorf("until %v, want the bind grace's end %v", f["until"], began.Add(5*time.Second))
		}
		if !strings.Contains(waits[1].Message, "pid 4343") {
			t.Errorf("the second wait: %q", waits[1].Message)
		}
	})
}

func TestElecting_BusyPastTheGraceIsTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) { cfg.BusyGrace = 3 * DefaultBindingPoll })
		busy := Observation{Class: ClassBusy, Reason: "silent", Opaque: "as-judged"}
		for range 3 { // at 0, 100ms and 200ms: within the grace
			h.observe(busy)
			h.expect("attempt")
			time.Sleep(DefaultBindingPoll)
		}
		h.observe(busy) // at 300ms
		h.expect("attempt", "take-over busy as-judged", "attempt")
		h.observe(Observation{Class: ClassWon})
		h.started(nil)
		h.expect("=> leaseholder on lease-won", "server start")
		h.m.Signal("SIGTERM")
		h.expect("server stop", "release", "=> exited on signal")
	})
}

func TestElecting_BoundExpiresWhileBindingServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		time.Sleep(DefaultBindingPoll)
		h.expect("attempt", "attempt") // the second stays in flight
		time.Sleep(DefaultElectionBound - DefaultBindingPoll)
		reason := "no usable lease within 20s (last seen: binding lease: no URL yet)"
		// the attempt cancelled then ends as a late win: dropped, and the
		// lease it created released, so nobody waits on it
		h.expect("=> alone on election-timed-out", "standalone: "+reason, "release")
		h.state(Alone)

		line := "cannot use the shared server: " + testLease + ": " + reason + "; serving this client alone, as --standalone would"
		if w := h.logged("warn"); len(w) != 1 || w[0] != line {
			t.Fatalf("warn lines = %q, want exactly %q", w, line)
		}
		f := h.logs.FilterMessage(line).All()[0].ContextMap()
		if f["lease"] != testLease || f["reason"] != reason {
			t.Errorf("fields = %v, want lease and reason", f)
		}
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

func TestElecting_UnusableServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: ClassUnusable, Reason: "creating it: not a directory"})
		h.expect("attempt", "=> alone on lease-unusable", "standalone: creating it: not a directory")
		h.m.LeaseReplaced("gone") // expected no-ops in alone
		h.m.LeaseChanged()
		h.expect()
		h.m.Signal("SIGTERM")
		h.expect("=> exited on signal")
		h.exitsWith(Outcome{Signal: "SIGTERM", Reason: "signal SIGTERM"})
	})
}

func TestElecting_UnknownClassServesAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.observe(Observation{Class: "haunted"})
		h.expect("attempt", "=> alone on lease-unusable", `standalone: the election returned an unknown class "haunted"`)
		h.m.ClientLeft()
		h.expect("=> exited on client-left")
	})
}

// A client that leaves while an attempt is linking the lease: the attempt's
// late win is dropped and what it created is released, never left behind.
func TestElecting_ClientLeftReleasesWhatALateAttemptCreated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t)
		h.expect("attempt")
		h.m.ClientLeft()
		h.expect("=> exited on client-left", "release")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// The lease is watched while, and only while, the machine elects: a change
// wakes a waiting election at once, without its poll; once attached, a
// change is nothing to it.
func TestElecting_TheLeaseWatchWakesAWaitingElection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changes := make(chan struct{})
		h := start(t, func(cfg *Config) { cfg.Election.(*fakeElection).changes = changes })
		h.observe(Observation{Class: ClassBinding, Reason: "no URL yet"})
		h.expect("attempt")
		changes <- struct{}{} // the lease file was written
		h.expect("attempt")   // at once: the poll is 100ms away and no time passed
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:8741/mcp"})
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:8741/mcp")
		select {
		case changes <- struct{}{}:
			t.Fatal("the lease is still watched while attached")
		default:
		}
		h.m.ClientLeft()
		h.expect("bridge stop", "=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}

// A contended take-over of a lease busy past its grace judges nothing: the
// lease found busy again after it is taken over at once, not after a new
// busy grace (which could outlast the election).
func TestElecting_AContendedTakeOverKeepsTheBusyGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.BusyGrace = 3 * DefaultBindingPoll
			cfg.Election.(*fakeElection).takeOverErr = fmt.Errorf("%w: lock held (waited 2s)", ErrContended)
		})
		busy := Observation{Class: ClassBusy, Reason: "silent", Opaque: "as-judged"}
		h.expect("attempt")
		for range 3 {
			h.observe(busy)
			after(DefaultBindingPoll)
			h.expect("attempt")
		}
		h.observe(busy) // past the grace
		h.expect("take-over busy as-judged")
		after(DefaultBindingPoll)
		h.expect("attempt")
		h.el.takeOverErr = nil // the lock is free now
		h.observe(busy)
		h.expect("take-over busy as-judged", "attempt")
	})
}

// A busy run is of one lease's server: the lease the process that held the
// lock wrote, its server found busy once, has a busy grace of its own,
// not what is left of the old server's.
func TestElecting_ABusyRunIsOfOneServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.BusyGrace = 3 * DefaultBindingPoll
			cfg.Election.(*fakeElection).takeOverErr = fmt.Errorf("%w: lock held (waited 2s)", ErrContended)
		})
		old := Observation{Class: ClassBusy, Reason: "silent", URL: "http://127.0.0.1:1/mcp", Owner: 11, Opaque: "old"}
		h.expect("attempt")
		for range 3 {
			h.observe(old)
			after(DefaultBindingPoll)
			h.expect("attempt")
		}
		h.observe(old)
		h.expect("take-over busy old")
		after(DefaultBindingPoll)
		h.expect("attempt")
		h.el.takeOverErr = nil
		h.observe(Observation{Class: ClassBusy, Reason: "silent", URL: "http://127.0.0.1:2/mcp", Owner: 22, Opaque: "new"})
		h.expect() // waited for, not taken over
		after(DefaultBindingPoll)
		h.expect("attempt")
	})
}

// A take-over is said at warn by the process that removed the lease,
// once it did: one that found the lock held (its holder frozen, say), or
// the lease changed since it was judged, removed nothing, and says so at
// debug.
func TestElecting_ATakeOverIsSaidByTheProcessThatRemovedTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Election.(*fakeElection).takeOverErr = fmt.Errorf("%w: lock held (waited 2s)", ErrContended)
		})
		stale := Observation{Class: ClassStale, Reason: "silent, owner gone", Owner: 11, URL: "http://127.0.0.1:1"}
		warned := func() int {
			return h.logs.FilterMessage("stale lease: silent, owner gone; taking it over").FilterLevelExact(zap.WarnLevel).Len()
		}
		h.observe(stale)
		h.expect("attempt", "take-over stale <nil>")
		for range 2 {
			after(DefaultBindingPoll)
			h.expect("attempt")
			h.observe(stale)
			h.expect("take-over stale <nil>")
		}
		h.el.takeOverErr, h.el.raceLost = nil, true
		after(DefaultBindingPoll)
		h.expect("attempt")
		h.observe(stale)
		h.expect("take-over stale <nil>", "attempt")
		if n := warned(); n != 0 {
			t.Errorf("take-overs that removed nothing said at warn %d times", n)
		}
		h.el.raceLost = false
		h.observe(stale)
		h.expect("take-over stale <nil>", "attempt")
		if n, all := warned(), h.logs.FilterMessageSnippet("; taking it over").Len(); n != 1 || all != 5 {
			t.Errorf("take-overs said at warn: %d of %d, want 1 of 5", n, all)
		}
	})
}

// A take-over another process is deciding (it holds the critical section
// too long to wait for) is waited for as a lease being written, and looked
// at again: the client is not served alone for it.
func TestElecting_AContendedTakeOverLooksAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := start(t, func(cfg *Config) {
			cfg.Election.(*fakeElection).takeOverErr = fmt.Errorf("%w: lock held (waited 2s)", ErrContended)
		})
		h.observe(Observation{Class: ClassStale, Reason: "silent, owner gone"})
		h.expect("attempt", "take-over stale <nil>")
		h.state(Electing)
		if got := h.logs.FilterMessageSnippet("waiting for the process writing the lease to finish it").Len(); got != 1 {
			t.Errorf("lines saying what is waited for = %d, want 1", got)
		}
		after(DefaultBindingPoll)
		h.expect("attempt")
		h.observe(Observation{Class: ClassLive, URL: "http://127.0.0.1:8741/mcp"})
		h.expect("=> attached on lease-live", "bridge attach http://127.0.0.1:8741/mcp")
		h.m.ClientLeft()
		h.expect("bridge stop", "=> exited on client-left")
		h.exitsWith(Outcome{Reason: "the client left"})
	})
}
