package httpserver

import (
	"context"
	"crypto/rand"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// Why an HTTP session ended, as logged in "http session closed".
const (
	endDelete        = "delete"         // the client sent DELETE
	endIdle          = "idle"           // it sent nothing for the idle timeout
	endStreamDropped = "stream-dropped" // its GET stream's connection dropped
	endShutdown      = "shutdown"       // the server is shutting down
	endRefused       = "refused"        // its initialize was answered with an error
)

// errUnknownSession is what the session table tells mcp-go about an id it
// never issued or that has ended.
var errUnknownSession = errors.New("transport: unknown or ended session")

// sessionTable is the [server.SessionIdManager] of the HTTP server. mcp-go
// asks it for every new id (Generate, on initialize), checks every id it is
// given against it (Validate) and tells it of every end (Terminate: DELETE,
// CloseSessions), so it sees each session's whole life.
//
// An id is pending from Generate until the initialize that asked for it has
// been answered with it (markLive); only live sessions are counted. Ended
// ids are forgotten: an unknown id and an ended one both get 404.
//
// The table also keeps each live session's idle timer (mcp-go's own
// sweeper looks only every half timeout, so a session outlived its timeout
// by up to half of it): a session ends idleTimeout after its last request
// ended, to the timer's precision, and never while a request of its is
// being answered, however long that takes.
type sessionTable struct {
	log         *zap.Logger
	onChange    func(n int)
	idleTimeout time.Duration
	expire      func(id string) // ends an idle session (the server's endSession)

	mu      sync.Mutex
	entries map[string]*sessionEntry
	reasons map[string]string // the reason the next Terminate of an id ends it for
	closing bool              // Shutdown began: every end is a shutdown, and no request begins
	live    int
	calls   sync.WaitGroup // requests begun and not ended
	// listening counts the open subscriptions/listen streams of 2026-07-28
	// clients, which have no session: such a stream is how a modern client
	// stays with the server, so it counts as a session while it lasts.
	listening int
	// opening counts the places taken by sessions being opened (admit),
	// so that those opened at once never pass the cap.
	opening   int
	presences map[*int]context.CancelFunc // the open presences of bridges (Config.PresenceID)
	// modernCalls counts the 2026-07-28 requests being answered but
	// listens. They belong to no session; once streams are ended (the
	// lease lost), they count as sessions in what onChange is told, so
	// that the server drains them too.
	modernCalls  int
	streamsEnded bool
	// coming counts the clients that proved the server theirs on a
	// connection that has carried no request since (an election's probe,
	// whose connection carries its first message), each for comingGrace
	// at most (awaitComing): a server whose own client leaves as another
	// comes does not end under the one coming.
	coming int

	dirty     atomic.Bool // a change is not yet reported
	reporting atomic.Bool // some goroutine is reporting
	reported  int         // last count reported; owned by the reporting goroutine
}

type sessionEntry struct {
	live    bool
	streams map[*int]context.CancelFunc // open GET streams, ended with the session (or by endStreams)
	busy    int                         // requests being answered
	// idle is the session's one idle timer, armed while it is live and not
	// busy, until idleAt. It is reset, never replaced: a stopped timer still
	// wakes the process at the time it was set for, so a new timer per
	// request would wake an idle server once for every request it answered.
	idle   *time.Timer
	idleAt time.Time
	// expiring: the idle timeout ended it, and its end is under way; a
	// request that comes meanwhile is not run on it (begin).
	expiring bool
	// ending is what runs once no request of its is being answered
	// (whenIdle): its end, its client's stream dropped or its DELETE come
	// under a call.
	ending []func()
}

func newSessionTable(log *zap.Logger, onChange func(int), idleTimeout time.Duration, expire func(string)) *sessionTable {
	return &sessionTable{log: log, onChange: onChange, idleTimeout: idleTimeout, expire: expire,
		entries: map[string]*sessionEntry{}, reasons: map[string]string{}, presences: map[*int]context.CancelFunc{}}
}

// Generate mints an unguessable session id (mcp-go calls it for initialize).
func (t *sessionTable) Generate() string {
	id := "mcp-session-" + rand.Text()
	t.mu.Lock()
	t.entries[id] = &sessionEntry{streams: map[*int]context.CancelFunc{}}
	t.mu.Unlock()
	return id
}

// Validate accepts the ids it issued that have not ended.
func (t *sessionTable) Validate(id string) (bool, error) {
	if !t.known(id) {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends a session: mcp-go calls it on DELETE, from its idle
// sweeper and from CloseSessions, before it unregisters the session.
func (t *sessionTable) Terminate(id string) (bool, error) {
	t.mu.Lock()
	e := t.entries[id]
	reason, marked := t.reasons[id]
	delete(t.reasons, id)
	if e == nil {
		t.mu.Unlock()
		return false, nil
	}
	delete(t.entries, id)
	if e.idle != nil {
		e.idle.Stop()
	}
	switch {
	case t.closing:
		reason = endShutdown
	case !marked:
		reason = endIdle // nothing of ours asked for it: the sweeper did
	}
	if e.live {
		t.live--
	}
	streams := slices.Collect(maps.Values(e.streams))
	t.mu.Unlock()

	for _, cancel := range streams {
		cancel()
	}
	if e.live {
		t.log.Info("http session closed", zap.String("session", id), zap.String("reason", reason))
		t.report()
	}
	return false, nil
}

// known reports whether id names a session that has not ended.
func (t *sessionTable) known(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.entries[id] != nil
}

// streaming reports whether session id has a GET stream open, where what
// the server sends it is written.
func (t *sessionTable) streaming(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[id]
	return e != nil && len(e.streams) > 0
}

// markLive counts a session once its initialize has been answered with it,
// in the place its opening took (so that it never counts twice).
func (t *sessionTable) markLive(id string, p *place) {
	t.mu.Lock()
	p.giveBackLocked()
	e := t.entries[id]
	opened := e != nil && !e.live
	if opened {
		e.live = true
		t.live++
		t.armLocked(id, e)
	}
	t.mu.Unlock()
	if opened {
		t.log.Info("http session opened", zap.String("session", id))
		t.report()
	}
}

// begin marks a request of session id as being answered: the session
// cannot idle out until the request ends and the timeout has passed since,
// nor be closed by a shutdown before it ends. It returns the function that
// ends the request, nil once the shutdown began or the session is idling
// out: the request must not run.
func (t *sessionTable) begin(id string) (end func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[id]
	switch {
	case t.closing, e != nil && e.expiring:
		return nil
	case e == nil:
		return func() {}
	}
	e.busy++
	t.calls.Add(1)
	if e.idle != nil {
		e.idle.Stop()
	}
	return func() {
		t.mu.Lock()
		e.busy--
		t.calls.Done()
		var ending []func()
		if t.entries[id] == e {
			if e.busy == 0 {
				ending, e.ending = e.ending, nil
			}
			t.armLocked(id, e)
		}
		t.mu.Unlock()
		for _, f := range ending {
			f()
		}
	}
}

// afterRequests runs end once session id has no request being answered:
// now, or as the last one ends. A session whose client's stream dropped
// is not ended under a call it is answering: a bridge that gave up on a
// server continued after a freeze may have one in flight there, which
// would be answered "this session has ended" instead of its answer.
func (t *sessionTable) afterRequests(id string, end func()) {
	if t.whenIdle(id, end) {
		t.log.Debug("a session's stream dropped while a request of its is answered: it ends once its requests have ended", zap.String("session", id))
		return
	}
	end()
}

// whenIdle runs end once session id has no request being answered, and
// reports true, when it has one now; else it runs nothing.
func (t *sessionTable) whenIdle(id string, end func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.entries[id]; e != nil && e.busy > 0 {
		e.ending = append(e.ending, end)
		return true
	}
	return false
}

// armLocked starts the idle timeout of a live session with no request
// being answered, from now.
func (t *sessionTable) armLocked(id string, e *sessionEntry) {
	if !e.live || e.busy > 0 || t.idleTimeout <= 0 {
		return
	}
	e.idleAt = time.Now().Add(t.idleTimeout)
	if e.idle != nil {
		e.idle.Reset(t.idleTimeout)
		return
	}
	e.idle = time.AfterFunc(t.idleTimeout, func() {
		t.mu.Lock()
		// a firing that a request or a later arming overtook is stale
		current := t.entries[id] == e && e.busy == 0 && !time.Now().Before(e.idleAt) && !t.closing
		e.expiring = current
		t.mu.Unlock()
		if current {
			t.expire(id)
		}
	})
}

// expect records why the next Terminate of id will end it; forget undoes
// it when the request that set it did not end the session.
func (t *sessionTable) expect(id, reason string) (forget func()) {
	t.mu.Lock()
	if t.entries[id] != nil {
		t.reasons[id] = reason
	}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.reasons, id)
		t.mu.Unlock()
	}
}

// addStream ties a GET stream to its session: the stream is cancelled when
// the session ends. Opening it is the session's activity too. It returns
// false when the session is unknown; remove unties it, and says how many
// of the session's streams are still open.
func (t *sessionTable) addStream(id string, cancel context.CancelFunc) (remove func() (left int), ok bool) {
	key := new(int)
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entries[id]
	if e == nil {
		return nil, false
	}
	e.streams[key] = cancel
	t.armLocked(id, e)
	return func() int {
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(e.streams, key)
		return len(e.streams)
	}, true
}

// shutdown makes every later end a shutdown, refuses every later request,
// and waits until ctx ends for those under way: a session closed under its
// call would see it run off the board, for no peer.
func (t *sessionTable) shutdown(ctx context.Context) {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.log.Info("shutting down: waiting for the requests under way")
	done := make(chan struct{})
	go func() { t.calls.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (t *sessionTable) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live + t.listening
}

// endStreams ends every bridge's presence, keeping the sessions, and from
// then on counts the 2026-07-28 calls being answered among what onChange is
// told. It returns, for each session with a GET stream open, what ends
// those streams: the caller ends them once they wrote what they were told.
func (t *sessionTable) endStreams() map[string]func() {
	t.mu.Lock()
	t.streamsEnded = true
	ends := map[string]func(){}
	for id, e := range t.entries {
		if streams := slices.Collect(maps.Values(e.streams)); len(streams) > 0 {
			ends[id] = func() {
				for _, cancel := range streams {
					cancel()
				}
			}
		}
	}
	for _, cancel := range t.presences {
		cancel()
	}
	t.mu.Unlock()
	t.report()
	return ends
}
