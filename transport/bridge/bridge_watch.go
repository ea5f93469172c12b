package bridge

import (
	"context"
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
	// how often the server is probed, and how long one probe may take: a
	// fifth of GoneAfter, between 50 ms and a second
	every := min(max(b.cfg.GoneAfter/5, 50*time.Millisecond), time.Second)
	began := time.Now()
	timer := time.AfterFunc(every, func() {
		lastAlive := began
		for watched.Err() == nil {
			probe, cancel := context.WithTimeout(watched, every)
			err := b.cfg.Alive(probe)
			cancel()
			now := time.Now()
			switch {
			case err == nil:
				lastAlive = now
			case watched.Err() != nil:
				return
			case now.Sub(lastAlive) >= goneAfter:
				cut(&SilentServer{URL: b.cfg.URL, After: now.Sub(lastAlive), last: err})
				return
			}
			select { // the next probe, one interval after this one ended
			case <-time.After(every):
			case <-watched.Done():
				return
			}
		}
	})
	return watched, func() {
		timer.Stop()
		cut(nil)
	}
}

// silenced returns the watch's cause when it cut ctx off, else nil.
func silenced(ctx context.Context) error {
	if s, ok := context.Cause(ctx).(*SilentServer); ok {
		return s
	}
	return nil
}
