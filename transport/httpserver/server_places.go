package httpserver

import (
	"context"
	"sync"
	"time"
)

// The session cap (Config.MaxSessions) counts places: a live session, one
// being opened, and an open 2026-07-28 listen take one each; a bridge's
// presence takes none, since the connection cap bounds those, one a bridge.
// The places live in the session table, under its lock, so that sessions
// opened at once never pass the cap.

// admit takes one of max places for a session being opened, until it is
// counted (markLive) or the place is given back; nil, and how many there
// are, when no place is left.
func (t *sessionTable) admit(max int) (p *place, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := t.placesLocked(); n >= max {
		return nil, n
	}
	t.opening++
	return &place{t: t, taken: true}, 0
}

// place is one of the cap's places, taken for a session being opened.
type place struct {
	t     *sessionTable
	taken bool // guarded by t.mu
}

// release gives the place back, unless the session took it.
func (p *place) release() {
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	p.giveBackLocked()
}

func (p *place) giveBackLocked() {
	if p.taken {
		p.taken = false
		p.t.opening--
	}
}

// places is how many of the cap's places are taken (placesLocked).
func (t *sessionTable) places() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.placesLocked()
}

// placesLocked is how many of the cap's places are taken: the sessions,
// those being opened and the open listens, bridges' presences aside
// (bounded by the connections, one a bridge, they take none).
func (t *sessionTable) placesLocked() int {
	return t.live + t.opening + t.listening - len(t.presences)
}

// listen counts an open subscriptions/listen stream as a session until
// the returned func is called, within max places ([sessionTable.admit]):
// nil, and how many there are, when none is left. A bridge's presence,
// when not nil, takes no place, and endStreams calls it to end it.
func (t *sessionTable) listen(max int, presence context.CancelFunc) (end func(), n int) {
	key := new(int)
	t.mu.Lock()
	if n := t.placesLocked(); presence == nil && n >= max {
		t.mu.Unlock()
		return nil, n
	}
	t.listening++
	if presence != nil {
		t.presences[key] = presence
	}
	t.mu.Unlock()
	t.report()
	return sync.OnceFunc(func() {
		t.mu.Lock()
		t.listening--
		delete(t.presences, key)
		t.mu.Unlock()
		t.report()
	}), 0
}

// modernCall counts a 2026-07-28 request other than a listen until the
// returned func is called.
func (t *sessionTable) modernCall() (end func()) {
	t.mu.Lock()
	t.modernCalls++
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.modernCalls--
		ended := t.streamsEnded
		t.mu.Unlock()
		if ended {
			t.report()
		}
	}
}

// held is what onChange is told: the live sessions, open listens and
// clients coming, and once streams are ended, the 2026-07-28 calls being
// answered.
func (t *sessionTable) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := t.live + t.listening + t.coming
	if t.streamsEnded {
		n += t.modernCalls
	}
	return n
}

// comingGrace bounds how long a client that proved the server is counted
// as coming: it sends its first message within milliseconds.
const comingGrace = 2 * time.Second

// awaitComing counts a client coming until arrived is called (its
// connection carried a request, or closed), or comingGrace passed.
func (t *sessionTable) awaitComing() (arrived func()) {
	t.mu.Lock()
	t.coming++
	t.mu.Unlock()
	t.report()
	came := sync.OnceFunc(func() {
		t.mu.Lock()
		t.coming--
		t.mu.Unlock()
		t.report()
	})
	timer := time.AfterFunc(comingGrace, came)
	return func() {
		timer.Stop()
		came()
	}
}

// report calls onChange with the held count when it differs from the last
// one reported. One goroutine reports at a time and no lock is held while it
// calls, so onChange may call back into the server (even Shutdown): a change
// made meanwhile is picked up by the goroutine already reporting. Under
// concurrent changes an intermediate count may be skipped; the last one
// never is.
func (t *sessionTable) report() {
	if t.onChange == nil {
		return
	}
	t.dirty.Store(true)
	for t.dirty.Load() {
		if !t.reporting.CompareAndSwap(false, true) {
			return // the reporting goroutine will see dirty
		}
		for t.dirty.Swap(false) {
			if n := t.held(); n != t.reported {
				t.reported = n
				t.onChange(n)
			}
		}
		t.reporting.Store(false)
	}
}
