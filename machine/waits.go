package machine

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// What a failed bridge tells the election that follows, beyond its words
// (docs/design.md#sharing-heals), through [Machine.BridgeFailedWith]:
//
//   - A full server (it refused a new session, asking to be tried again
//     later) is waited for as it asks, never sooner than fullWaitFloor,
//     rather than attached to again at once. The refusals of one server
//     make one run, and the election bound is counted from the run's first
//     refusal, however many times the client re-attaches meanwhile: past
//     it, the client is served alone with the server's reason.
//   - A silent server (the bridge's probes found it answering nothing)
//     has already been waited for: the election's busy grace counts from
//     when the bridge's probes began to fail, so that a frozen server costs
//     a waiting client the busy grace once, not twice.
//
// Both are durations this process measured on its own monotonic clock,
// made instants of the machine's clock as they arrive.

// BridgeFailure is what a bridge knows of its server's failure.
type BridgeFailure struct {
	// Reason says why, for the log and, if the client ends up served
	// alone, for it: "the shared server at … is full (4 sessions)".
	Reason string
	// URL is the server's, as the live observation named it.
	URL string
	// Full says the server refused a new session because it has as many
	// as it takes; RetryAfter is how long it asked to be left alone (0:
	// it did not say).
	Full       bool
	RetryAfter time.Duration
	// Silent is how long the server had answered no probe when the bridge
	// gave up on it; 0 when it was not silent.
	Silent time.Duration
}

// A full server is never tried more often than fullWaitFloor, whatever it
// asks; one that does not say is tried again after fullWaitDefault.
const (
	fullWaitFloor   = 500 * time.Millisecond
	fullWaitDefault = time.Second
)

// fullRun is the refusals of one full server, while it stays the lease's.
type fullRun struct {
	url, reason string
	since       time.Time // its first refusal
	last        time.Time // its latest
	retryAt     time.Time // not to be tried before
}

// silence is when a bridge's server fell silent, by the bridge's probes.
type silence struct {
	url   string
	since time.Time
}

// Pure decisions.

// nextFull is the run after the bridge failure f at now: any other failure
// ends it; a refusal continues it, unless the last one is more than bound
// ago (the client was served meanwhile), when it begins a new one.
func nextFull(run fullRun, f BridgeFailure, now time.Time, bound time.Duration) fullRun {
	if !f.Full {
		return fullRun{}
	}
	since := run.since
	if !run.on(now, bound) || run.url != f.URL {
		since = now
	}
	return fullRun{url: f.URL, reason: f.Reason, since: since, last: now, retryAt: now.Add(fullWait(f.RetryAfter))}
}

// fullWait is how long a full server that asked for asked is left alone.
func fullWait(asked time.Duration) time.Duration {
	if asked <= 0 {
		return fullWaitDefault
	}
	return max(asked, fullWaitFloor)
}

// on reports whether the run still counts at now: refusals within bound of
// each other are one run.
func (r fullRun) on(now time.Time, bound time.Duration) bool {
	return !r.since.IsZero() && now.Sub(r.last) <= bound
}

// refuses reports whether obs is the full server, live, before the time
// it asked to be tried again.
func (r fullRun) refuses(obs Observation, now time.Time) bool {
	return r.url != "" && obs.Class == ClassLive && obs.URL == r.url && now.Before(r.retryAt)
}

// seen is the run after the election observed obs: any observation but
// the full server live ends it (another server, or none, holds the lease).
func (r fullRun) seen(obs Observation) fullRun {
	if obs.Class != ClassLive || obs.URL != r.url {
		return fullRun{}
	}
	return r
}

// electionEnds is when an election starting at now runs out of time:
// bound from now, or, while a run of refusals is on, bound from its first.
func electionEnds(now time.Time, bound time.Duration, run fullRun) time.Time {
	if run.on(now, bound) {
		return run.since.Add(bound)
	}
	return now.Add(bound)
}

// fullReason says why a client is served alone once a full server had no
// room for it within bound.
func fullReason(run fullRun, bound time.Duration) string {
	return fmt.Sprintf("%s, and had no room for this client within %s", run.reason, bound)
}

// silentSince is since, the start of a run of busy observations, moved
// back to when the bridge's probes found that same server silent.
func silentSince(since time.Time, obs Observation, s silence) time.Time {
	if obs.Class != ClassBusy || s.url == "" || obs.URL != s.url || since.IsZero() || !s.since.Before(since) {
		return since
	}
	return s.since
}

// The machine's side.

// BridgeFailedWith reports that the attached server failed, as
// [Machine.BridgeFailed] does, with what the bridge knows of it.
func (m *Machine) BridgeFailedWith(f BridgeFailure) {
	m.inbox.post(event{trigger: BridgeFailed, text: f.Reason, bridge: &f})
}

// noteBridgeFailure records what a failed bridge said of its server.
func (m *Machine) noteBridgeFailure(f *BridgeFailure, now time.Time) {
	if f == nil {
		f = &BridgeFailure{}
	}
	m.full = nextFull(m.full, *f, now, m.cfg.ElectionBound)
	m.silence = silence{}
	if f.Silent > 0 && f.URL != "" {
		m.silence = silence{url: f.URL, since: now.Add(-f.Silent)}
	}
}

// noteObservation weighs an attempt's observation against what the last
// bridge said: the full server stays waited for while it is the lease's,
// and a silence counts once, toward the first busy judgement of its server.
func (m *Machine) noteObservation(obs Observation, now time.Time) {
	m.full = m.full.seen(obs)
	m.refused = m.full.refuses(obs, now)
	since := NextBusySince(m.busySince, obs.Class, now)
	if credited := silentSince(since, obs, m.silence); !credited.Equal(since) {
		m.log.Info(fmt.Sprintf("the server at %s had answered no probe for %s when this process's bridge gave up on it: that counts toward the busy grace (%s)",
			obs.URL, now.Sub(credited).Round(time.Millisecond), m.cfg.BusyGrace),
			zap.String("url", obs.URL), zap.Duration("silent", now.Sub(credited)))
		since = credited
	}
	m.silence = silence{}
	m.busySince = since
}

// outOfTime says why an election that ran out of time gave up, and ends
// the run of refusals, so that a later election counts its own bound;
// what the full server asked is still heeded: a process served alone
// tries it again only once it asked to be.
func (m *Machine) outOfTime() string {
	reason := timeoutReason(m.cfg.ElectionBound, m.obs)
	if m.full.url != "" && m.obs.URL == m.full.url {
		reason = fullReason(m.full, m.cfg.ElectionBound)
	}
	m.full = fullRun{url: m.full.url, reason: m.full.reason, retryAt: m.full.retryAt}
	return reason
}

// hasRoom: a client to attach, and the live server found is not one that
// asked to be left alone until later.
func hasRoom(ctx context.Context, args ...any) bool {
	return hasClient(ctx, args...) && !machineOf(ctx).refused
}

// serverFull: a client to attach, and the live server found asked to be
// left alone until later.
func serverFull(ctx context.Context, args ...any) bool {
	return hasClient(ctx, args...) && machineOf(ctx).refused
}

// awaitRoom waits until the full server asked to be tried again, or for a
// change of the lease; the election's bound still runs. The wait is said
// once, as every wait is (announceWait): an attempt that a change of the
// lease brought meanwhile and that finds the same refusal says nothing.
func awaitRoom(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	wait := time.Until(m.full.retryAt)
	if key := "full " + m.full.url + " " + m.full.retryAt.String(); key != m.waitingOn {
		m.waitingOn = key
		then := fmt.Sprintf("until %s; then attaching again", m.full.retryAt.Format("15:04:05.000"))
		if m.boundEnds.Before(m.full.retryAt) {
			then = fmt.Sprintf("but only until the election's bound at %s; then this client is served alone", m.boundEnds.Format("15:04:05.000"))
		}
		m.log.Info(fmt.Sprintf("%s; waiting %s, as it asks, %s", m.full.reason, wait.Round(100*time.Millisecond), then),
			zap.String("url", m.full.url), zap.Time("until", m.full.retryAt), zap.Time("bound", m.boundEnds))
	}
	m.poll = time.NewTimer(wait)
	return nil
}
