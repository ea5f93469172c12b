package machine

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// What a failed bridge tells the machine, beyond its words
// (docs/design.md#sharing-heals), through [Machine.BridgeFailedWith]:
//
//   - A full server (it refused a new session, asking to be tried again
//     later) sends the client alone at once, answered there while the
//     server is left alone as it asks, never for less than fullWaitFloor:
//     a try from alone that finds it live before then waits its turn again
//     instead of attaching to be refused. So does any failure of a bridge
//     that never took the client over from alone: no try to share holds
//     the client in an election.
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
	// Alone says the bridge never took the client over: it is still served
	// alone.
	Alone bool
}

// A full server is never tried more often than fullWaitFloor, whatever it
// asks; one that does not say is tried again after fullWaitDefault.
const (
	fullWaitFloor   = 500 * time.Millisecond
	fullWaitDefault = time.Second
)

// silence is when a bridge's server fell silent, by the bridge's probes.
type silence struct {
	url   string
	since time.Time
}

// Pure decisions.

// refusedUntil is when obs, the live server that the bridge failure f at
// at found full, asked to be tried again; the zero time when obs is not
// that server.
func refusedUntil(f BridgeFailure, at time.Time, obs Observation) time.Time {
	if !f.Full || obs.Class != ClassLive || obs.URL != f.URL {
		return time.Time{}
	}
	if f.RetryAfter <= 0 {
		f.RetryAfter = fullWaitDefault
	}
	return at.Add(max(f.RetryAfter, fullWaitFloor))
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

// BridgeFailedWith reports that the attached server is gone, refused with
// lease_lost or as full, or lost the session twice, with what the bridge
// knows of it.
func (m *Machine) BridgeFailedWith(f BridgeFailure) {
	m.inbox.post(event{trigger: BridgeFailed, text: f.Reason, bridge: f})
}

// noteBridgeFailure records what a failed bridge said of its server.
func (m *Machine) noteBridgeFailure(f BridgeFailure, now time.Time) {
	m.failed, m.failedAt, m.failedOf = f, now, m.obs.Owner
	m.silence = silence{}
	if f.Silent > 0 && f.URL != "" {
		m.silence = silence{url: f.URL, since: now.Add(-f.Silent)}
	}
}

// noteObservation weighs an attempt's observation against what the last
// bridge said: a silence counts once, toward the first busy judgement of
// its server.
func (m *Machine) noteObservation(obs Observation, now time.Time) {
	if obs.Contended {
		return // nothing judged: a busy run and a silence stand
	}
	if run := fmt.Sprint(obs.Owner, obs.URL); obs.Class == ClassBusy && run != m.busyOf {
		m.busySince, m.busyOf = time.Time{}, run // another lease's server: its own run
	}
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

// serverFull: the live server found says it is full, or asked to be left
// alone until later. Attaching, a try would hold the client's calls as it
// carries its session (client_carry.go), only to be refused.
func serverFull(ctx context.Context, _ ...any) bool {
	m := machineOf(ctx)
	return m.obs.Full || m.now.Before(refusedUntil(m.failed, m.failedAt, m.obs))
}

// triesLevel is the level of what a try from alone says as it attaches
// and falls back: debug while it tries the full server that serveAlone
// warned of, as that server asked (every few seconds, for as long as it
// stays full), info otherwise: for another server at its URL too.
func (m *Machine) triesLevel() zapcore.Level {
	if m.failed.Full && m.failure == m.warned && m.obs.URL == m.failed.URL && m.obs.Owner == m.failedOf {
		return zap.DebugLevel
	}
	return zap.InfoLevel
}

// hasRoom: the live server found is not one that asked to be left alone.
func hasRoom(ctx context.Context, args ...any) bool { return !serverFull(ctx, args...) }
