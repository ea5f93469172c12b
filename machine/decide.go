package machine

import (
	"fmt"
	"slices"
	"time"
)

// Pure decisions: functions of their inputs only, table-tested without a
// machine. Times come from the machine's own clock, never from a file.

// TriggerFor turns an observation into the fact to fire, "lease-" and its
// class, and the reason to keep when that fact sends the client to be
// served alone. An unknown class is unusable: a client is never left
// waiting on a judgement nobody made.
func TriggerFor(obs Observation) (t Trigger, failure string) {
	switch {
	case !slices.Contains(Classes, obs.Class):
		return LeaseUnusable, fmt.Sprintf("the election returned an unknown class %q", obs.Class)
	case obs.Class == ClassUnusable:
		return LeaseUnusable, obs.Reason
	case obs.Class == ClassLive && obs.Full:
		return LeaseLive, fmt.Sprintf("the shared server at %s is full", obs.URL)
	}
	return Trigger("lease-" + obs.Class), ""
}

// NextBusySince returns when the current unbroken run of busy observations
// began: unchanged while busy, now for the first busy one, zero otherwise.
func NextBusySince(since time.Time, class Class, now time.Time) time.Time {
	switch {
	case class != ClassBusy:
		return time.Time{}
	case since.IsZero():
		return now
	}
	return since
}

// GraceElapsed reports whether a lease busy since since has been waited for
// long enough to be taken over.
func GraceElapsed(since, now time.Time, grace time.Duration) bool {
	return !since.IsZero() && now.Sub(since) >= grace
}

// shouldExit reports whether a server that serves no new clients (its owner
// left, or its lease was lost) has nobody left: its own client has left and
// no other session remains.
func shouldExit(clientLeft bool, sessions int) bool {
	return clientLeft && sessions <= 0
}

// timeoutReason says why an election that ran out of time gave up, naming
// the last thing it saw.
func timeoutReason(bound time.Duration, last Observation) string {
	if last.Class == "" {
		return fmt.Sprintf("no election attempt finished within %s", bound)
	}
	return fmt.Sprintf("no usable lease within %s (last seen: %s lease: %s)", bound, last.Class, last.Reason)
}

// endingOf is how the machine ended, given the fact that ended it, the
// signal recorded, why sharing failed, and the URL of the live server last
// found. A lease that cannot be used, an election out of time and a server
// that would not start end only a headless process (one with a client
// serves it alone): it could not do its one job, which is a failure.
func endingOf(t Trigger, signal, failure, url string) *Outcome {
	switch t {
	case ClientLeft:
		return &Outcome{Reason: "the client left"}
	case Signal:
		return &Outcome{Reason: "signal " + signal, Signal: signal}
	case SessionsChanged:
		return &Outcome{Reason: "the last session ended"}
	case LeaseLive:
		return &Outcome{Reason: "a shared server already runs at " + url}
	case LeaseUnusable, ElectionTimedOut, ServerStartFailed:
		return &Outcome{Reason: "cannot run the shared server: " + failure, Failure: failure}
	}
	return &Outcome{Reason: string(t)}
}

// waitEnd says until when an election that waits on obs (binding or busy)
// waits, on the machine's clock, and what happens then: a busy lease is
// taken over once busy since since for grace, a binding one once it is
// abandoned (obs.Grace from now), unless the election's bound ends first,
// which serves the client alone, or ends a headless process, which has
// none.
func waitEnd(obs Observation, now, since time.Time, grace time.Duration, bound time.Time, headless bool) (until time.Time, then string) {
	until, then = bound, "this client is served alone"
	if headless {
		then = "this process ends: it has no client to serve alone"
	}
	var own time.Time
	switch {
	case obs.Class == ClassBusy && !since.IsZero():
		own = since.Add(grace)
	case obs.Class == ClassBinding && obs.Grace > 0:
		own = now.Add(obs.Grace)
	}
	if !own.IsZero() && own.Before(bound) {
		until, then = own, "the lease is taken over"
	}
	return until, then
}

// waitMessage says what a waiting election waits for, whose process, and
// until when (local time, as an operator reads it beside the log's ts).
func waitMessage(obs Observation, until time.Time, then string) string {
	owner := "the lease's owner"
	if obs.Owner > 0 {
		owner = fmt.Sprintf("the lease's owner (pid %d)", obs.Owner)
	}
	what := owner + " to publish its server's URL"
	switch {
	case obs.Class == ClassBusy:
		what = "the server of " + owner + " to answer"
	case obs.Owner == 0: // an empty lease, or one whose lock is held: no owner read yet
		what = "the process writing the lease to finish it"
	}
	return fmt.Sprintf("waiting for %s, until %s; then %s", what, until.Format("15:04:05.000"), then)
}
