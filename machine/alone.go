package machine

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Alone's named actions: a process served alone keeps trying to share
// (R2, alone is a detour), on its own clock, never busier than one try
// per Config.JoinRetry.

// serveAlone serves the client without sharing, and says why, once until
// the client is shared again: a try that failed as the last one did (a
// server that cannot bind, a full server that refuses the bridge again)
// says it at debug.
func serveAlone(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	level := zap.WarnLevel
	if m.failure == m.warned {
		level = zap.DebugLevel
	}
	m.log.Log(level, fmt.Sprintf("cannot use the shared server: %s: %s; serving this client alone, as --standalone would", m.cfg.LeasePath, m.failure),
		zap.String("lease", m.cfg.LeasePath), zap.String("reason", m.failure))
	m.lastTry, m.stillWhy, m.warned = time.Now(), m.failure, m.failure // the attempt that failed was a try, and the warning says why
	if err := m.cfg.Standalone.Serve(m.runCtx, m.failure); err != nil {
		// Tries to share go on: attaching needs no layer here, and what
		// failed (a file half-written, say) may not last.
		m.log.Error("cannot serve this client alone either", zap.Error(err))
	}
	return nil
}

// tryLater waits its turn to try to share again: JoinRetry at first, twice
// as long after each try that found no way (up to JoinRetryMax), when a
// full server asked to be tried again, and at once when the lease changes
// (trySoon), or changed while the try ran
// (noteChange): the try may have read it before. A try that found no way says why
// at info when the reason is new, at debug when it is not.
func tryLater(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	if m.unwatch == nil {
		m.watchLease() // again on every turn: the lease directory may exist by now
	}
	wait := cmp.Or(m.retryWait, m.cfg.JoinRetry)
	if until := refusedUntil(m.failed, m.failedAt, m.obs); m.now.Before(until) {
		wait = until.Sub(m.now) // a full server is tried when it asked: not sooner, to no purpose, nor later
	} else {
		m.retryWait = min(2*wait, m.cfg.JoinRetryMax)
	}
	if m.changed {
		m.changed, m.retryWait = false, 0
		wait = max(0, m.cfg.JoinRetry-time.Since(m.lastTry))
	}
	m.armRetry(wait)
	why := fmt.Sprintf("%s lease: %s", m.obs.Class, m.obs.Reason)
	switch m.obs.Class {
	case ClassUnusable:
		why = m.obs.Reason
	case ClassWon, ClassLive, "": // its server did not start; the server refused the bridge (full, say); no attempt finished in time
		why = m.failure
	}
	level := zap.DebugLevel
	if why != m.stillWhy {
		level, m.stillWhy = zap.InfoLevel, why
	}
	m.log.Log(level, fmt.Sprintf("still serving this client alone: %s; trying to share again in %s", why, wait),
		zap.String("lease", m.cfg.LeasePath), zap.String("reason", why), zap.Duration("retry_in", wait))
	return nil
}

// trySoon moves the next try up after the lease changed: as soon as the
// least time between tries allows, with the wait starting over.
func trySoon(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.retryWait = 0
	m.armRetry(max(0, m.cfg.JoinRetry-time.Since(m.lastTry)))
	return nil
}

// noteChange remembers that the lease changed while a try runs, which
// may have read it before: the next try then comes soon (tryLater).
func noteChange(ctx context.Context, _ ...any) error {
	machineOf(ctx).changed = true
	return nil
}

// tryToJoin makes one election attempt from alone: won, the process becomes
// the leaseholder; live, it attaches; either way the session served alone
// is carried. The client is served alone meanwhile, never held.
func tryToJoin(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.lastTry = time.Now()
	m.log.Debug("trying to share again", zap.String("lease", m.cfg.LeasePath))
	m.startAttempt()
	return nil
}

// stopTrying ends alone's tries: its watch, its attempt, its timer.
func stopTrying(ctx context.Context, _ ...any) error {
	m := machineOf(ctx)
	m.stopElection()
	m.changed = false
	return nil
}

// armRetry sets the next try d from now, unless one is due sooner.
func (m *Machine) armRetry(d time.Duration) {
	if m.retry != nil {
		if time.Until(m.retryAt) <= d {
			return
		}
		m.retry.Stop()
	}
	m.retryAt = time.Now().Add(d)
	m.retry = time.NewTimer(d)
}
