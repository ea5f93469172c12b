package bridge

import (
	"context"
	"errors"
	"time"
)

// A stopped server is a gone server (docs/design.md#server-and-bridge): a
// process stopped with SIGSTOP, a suspended laptop or a debugger keeps its
// socket, so the kernel accepts the bridge's connection and its request,
// and nothing answers. While a message is outstanding, the bridge therefore
// probes the server (GET /, which a live server answers even while a tool
// is slow); a server that has answered no probe for Config.GoneAfter
// is gone for that message: the bridge leaves it, as on any other failure
// whose outcome is unknown (Gone).

// idleKey marks the heartbeat's ping: no message waits on it, so its
// server is left a probe timeout sooner, for the election's own probe to
// complete the busy grace.
type idleKey struct{}

// watchServer returns ctx cut off, with a *SilentServer cause, once the
// server has answered no probe for GoneAfter; stop ends the watch. Probing
// starts only when a message has waited for one probe interval, so that a
// quick answer costs a timer and nothing more.
func (b *Bridge) watchServer(ctx context.Context) (watched context.Context, stop func()) {
	if b.cfg.Alive == nil || b.cfg.GoneAfter <= 0 {
		return ctx, func() {}
	}
	goneAfter := b.cfg.GoneAfter
	if ctx.Value(idleKey{}) != nil {
		goneAfter -= b.cfg.ProbeTimeout
	}
	watched, cut := context.WithCancelCause(ctx)
	began := time.Now()
	timer := time.AfterFunc(b.probeEvery(), func() {
		if s := b.probeUntil(watched, began, goneAfter, false); s != nil {
			cut(s)
		}
	})
	return watched, func() {
		timer.Stop()
		cut(nil)
	}
}

// probeEvery is how often the server is probed: a fifth of GoneAfter,
// between 50 ms and a second.
func (b *Bridge) probeEvery() time.Duration {
	return min(max(b.cfg.GoneAfter/5, 50*time.Millisecond), time.Second)
}

// probeUntil probes the server until ctx ends (nil), it has answered no
// probe for goneAfter since lastAlive (a *SilentServer), or, when
// oneAnswer, it answers one (nil).
func (b *Bridge) probeUntil(ctx context.Context, lastAlive time.Time, goneAfter time.Duration, oneAnswer bool) *SilentServer {
	every := b.probeEvery()
	for ctx.Err() == nil {
		// One probe may take the probe timeout, as the election's does: a
		// server that answers within it is alive, however slowly (a loaded
		// machine); but not past the grace, so that a silent one is left
		// in time.
		within := max(min(b.cfg.ProbeTimeout, time.Until(lastAlive.Add(goneAfter))), every)
		probe, cancel := context.WithTimeout(ctx, within)
		err := b.cfg.Alive(probe)
		cancel()
		now := time.Now()
		switch {
		case err == nil && oneAnswer, ctx.Err() != nil:
			return nil
		case err == nil:
			lastAlive = now
		case errors.Is(err, ErrGone), now.Sub(lastAlive) >= goneAfter:
			return &SilentServer{URL: b.cfg.URL, After: now.Sub(lastAlive), last: err}
		}
		select { // the next probe, one interval after this one ended
		case <-time.After(every):
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// idleSilence probes the server while no message waits: nil once it
// answers, a *SilentServer once it has answered none for GoneAfter less a
// probe timeout (the election's own probe completes the busy grace).
func (b *Bridge) idleSilence() *SilentServer {
	if b.cfg.Alive == nil || b.cfg.GoneAfter <= 0 {
		return nil
	}
	return b.probeUntil(b.ctx, time.Now(), b.cfg.GoneAfter-b.cfg.ProbeTimeout, true)
}

// silenced returns the watch's cause when it cut ctx off, else nil.
func silenced(ctx context.Context) error {
	if s, ok := context.Cause(ctx).(*SilentServer); ok {
		return s
	}
	return nil
}
