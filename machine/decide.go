package machine

import (
	"fmt"
	"time"
)

// Pure decisions: functions of their inputs only, table-tested without a
// machine. Times come from the machine's own clock, never from a file.

// classTriggers maps each class an Election may report to its trigger.
var classTriggers = map[Class]Trigger{
	ClassWon:        LeaseWon,
	ClassLive:       LeaseLive,
	ClassStale:      LeaseStale,
	ClassCorrupt:    LeaseCorrupt,
	ClassEmpty:      LeaseEmpty,
	ClassAbandoned:  LeaseAbandoned,
	ClassSuperseded: LeaseSuperseded,
	ClassBinding:    LeaseBinding,
	ClassBusy:       LeaseBusy,
	ClassUnusable:   LeaseUnusable,
}

// triggerFor turns an observation into the fact to fire, and the reason to
// keep when that fact sends the client to be served alone. An unknown class
// is unusable: a client is never left waiting on a judgement nobody made.
func triggerFor(obs Observation) (t Trigger, failure string) {
	t, ok := classTriggers[obs.Class]
	switch {
	case !ok:
		return LeaseUnusable, fmt.Sprintf("the election returned an unknown class %q", obs.Class)
	case t == LeaseUnusable:
		return t, obs.Reason
	}
	return t, ""
}

// nextBusySince returns when the current unbroken run of busy observations
// began: unchanged while busy, now for the first busy one, zero otherwise.
func nextBusySince(since time.Time, class Class, now time.Time) time.Time {
	switch {
	case class != ClassBusy:
		return time.Time{}
	case since.IsZero():
		return now
	}
	return since
}

// graceElapsed reports whether a lease busy since since has been waited for
// long enough to be taken over.
func graceElapsed(since, now time.Time, grace time.Duration) bool {
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

// exitReason says in words why the machine ended, given the fact that ended
// it and the signal recorded, if any.
func exitReason(t Trigger, signal string) string {
	switch t {
	case ClientLeft:
		return "the client left"
	case Signal:
		return "signal " + signal
	case SessionsChanged:
		return "the last session ended"
	case IdleTimeout:
		return "the remaining sessions were idle past the idle timeout"
	}
	return string(t)
}
