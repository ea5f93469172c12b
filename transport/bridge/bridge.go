package bridge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Ids of the requests the bridge sends on its client's behalf. Their
// answers are never shown to the client.
const (
	heartbeatID = "majordomus-bridge-heartbeat"
	toolsID     = "majordomus-bridge-tools"
)

// DefaultHeartbeat is how often a bridge pings its session by default.
const DefaultHeartbeat = 20 * time.Second

// Config configures a [Bridge].
type Config struct {
	// URL is the shared server's base URL ("http://127.0.0.1:8741").
	URL string
	// Secret is the lease's secret: every request carries its token, and on
	// every new connection the server proves it holds it before anything is
	// sent to /mcp (docs/security.md).
	Secret string
	// ProbeTimeout bounds that proof: the probe timeout of the caller's
	// timings, which the registry's probe is bounded by too. Required.
	ProbeTimeout time.Duration
	// Proven, when set, is a connection to URL whose server already proved
	// it holds Secret (the election's probe's): the first message that may
	// be sent twice goes on it, and the bridge closes it.
	Proven net.Conn
	// Out is the client's stdout: what the server sends that answers no
	// pending request (notifications, server-to-client requests) goes there.
	Out *wire.FrameWriter
	// Heartbeat is how often the session is pinged. Default 20s.
	Heartbeat time.Duration
	// IdleTimeout is the server's idle timeout: a session the bridge left
	// on a server that failed ends by itself within it, so trying to end
	// it is given up then. Default wire.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives the bridge's logs. Nil = no logs.
	Logger *zap.Logger
	// Alive probes the server (GET /): nil when a live server answered. While
	// a message is outstanding the bridge probes it; one that has answered no
	// probe for GoneAfter (the busy grace), or whose probe failed with
	// ErrGone, is gone for that message (see Gone). Nil, or GoneAfter 0: no
	// watch.
	Alive     func(ctx context.Context) error
	GoneAfter time.Duration
	// Current reports whether the lease still names the server; nil: not
	// asked. One that no longer does is left as one that lost its lease.
	Current func() bool
	// Carried is what the client's earlier backends learned of its session
	// that the bridge keeps: which tools may be resent, its peer id, the
	// generation its client was told, and a 2026-07-28 client's last _meta,
	// whose presence the bridge then holds from the start, before the client
	// speaks again. The rest is replayed onto the bridge
	// (carry.Session.Replay).
	Carried carry.Session
	// NewPeer draws the client's peer id, when Carried has none, the first
	// time a 2026-07-28 message needs it, from the counter the server's
	// board draws from.
	NewPeer func() string
}

// Bridge is the backend of a process attached to a shared server (see the
// package doc); a failure it cannot heal ends its relaying, as a *Gone.
type Bridge struct {
	cfg      Config
	log      *zap.Logger
	endpoint string
	// authorization is the header value that lets the bridge in
	// (docs/security.md).
	authorization string
	posts         *poster      // the POSTs
	client        *http.Client // the GET stream and the DELETE: a connection each

	parent context.Context // the ctx it was made with: leaveLater runs under it
	ctx    context.Context // heartbeat and stream; cancelled when it leaves and on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // the session changed or became ready

	reinitMu  sync.Mutex     // one re-initialisation at a time
	opening   sync.WaitGroup // the initializes being seen through (bridge_opening.go)
	leaseLost atomic.Bool    // the server said it lost its lease (wire.LeaseHeader)
	inflight  atomic.Int32   // messages being relayed to the server; movedOff once it moves (bridge_move.go)
	// modern are the 2026-07-28 requests being relayed: they belong to no
	// session, so a move need not wait for them, and the client may cancel
	// them (closing their streams).
	modern     wire.Cancels
	toolsMu    sync.Mutex // one tools/list of the bridge's own at a time
	toolsAsked bool       // the bridge asked the server for its tools (toolsMu held)
	toolsFail  *failure   // how the server failed a 2026-07-28 asking (toolsMu held)

	mu      sync.Mutex
	session string // the id of the client's session on the server
	// record is the client's session as the bridge knows it: its last
	// successful initialize, the protocol it negotiated, the peer id the
	// server gave it, its announcement, what it asked to hear, a 2026-07-28
	// client's _meta, which tools may be resent.
	record     carry.Session
	ready      bool         // the client said notifications/initialized
	present    bool         // the presence of a 2026-07-28 client is held (bridge_presence.go)
	born       time.Time    // heard counts from it, on the monotonic clock
	heard      atomic.Int64 // when the presence last heard the server, since born
	quiet      *time.Timer  // fires a heartbeat after that: silent, a server is probed (silent)
	silent     chan struct{}
	streamStop context.CancelFunc
	left       *Gone // why it left its server, once it did
	closed     bool
	done       chan struct{} // closed once it left or was closed
	doneOnce   sync.Once
	closeOnce  sync.Once

	announcing json.RawMessage // a majordomus_announce's arguments, sent and not answered
	reopened   chan struct{}   // closed once the client's initialize that ended its session is answered (reopening)
	stale      string          // the session the client left on this server (Config.Carried), until its initialize ends it
	written    chan struct{}   // closed once the last write to the client toClient began has ended; nil before the first
}

// New returns a bridge to cfg.URL. It connects on the first message.
// Its heartbeat and stream run until Close, until it leaves its server, or
// until ctx ends; a session it left on a failed server is ended within ctx.
func New(ctx context.Context, cfg Config) (*Bridge, error) {
	if cfg.Out == nil {
		return nil, errors.New("transport: a bridge needs the client's output")
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.ProbeTimeout <= 0 {
		return nil, errors.New("transport: a bridge needs the probe timeout")
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = wire.DefaultIdleTimeout
	}
	endpoint := strings.TrimSuffix(cfg.URL, "/") + "/mcp"
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("transport: the shared server's URL %q is not an http:// URL", cfg.URL)
	}
	dial := provenDialer(cfg.URL, cfg.Secret, cfg.ProbeTimeout)
	posts := &poster{endpoint: endpoint, dial: dial}
	if cfg.Proven != nil {
		posts.release(kept(cfg.Proven), true)
	}
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	b := &Bridge{
		cfg: cfg, log: cfg.Logger, endpoint: endpoint, posts: posts,
		authorization: secret.Authorization(cfg.Secret),
		client:        &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}},
		parent:        ctx,
		wake:          make(chan struct{}, 1),
		silent:        make(chan struct{}, 1),
		born:          time.Now(),
		done:          make(chan struct{}),
		record: carry.Session{
			SafeTools:  maps.Collect(maps.All(cfg.Carried.SafeTools)), // written to: a map even from nil
			Peer:       cfg.Carried.Peer,
			Meta:       cfg.Carried.Meta,
			Generation: cfg.Carried.Generation, // told elsewhere: what serves next goes on past it too
		},
	}
	if cfg.Carried.LeftURL == cfg.URL {
		b.stale = cfg.Carried.Left
	}
	b.quiet = time.AfterFunc(cfg.Heartbeat, func() { poke(b.silent) })
	b.quiet.Stop() // until the presence hears its server
	b.ctx, b.cancel = context.WithCancel(ctx)
	b.wg.Go(b.heartbeat)
	b.wg.Go(b.streamLoop)
	if len(cfg.Carried.Initialize) == 0 {
		// A client that opened a session is that session's peer: its
		// presence waits until the session is open here again, and names
		// it (initialized), or its claim of the peer the session holds
		// would be refused and make a second one.
		b.startPresence()
	}
	return b, nil
}

// Handle relays one message or batch and returns the answer; once the
// bridge left its server, every request is answered "shared server
// unavailable" with the reason.
func (b *Bridge) Handle(ctx context.Context, msg json.RawMessage) []byte {
	answer, err := b.Relay(ctx, msg)
	if err != nil {
		return wire.Unavailable(msg, err)
	}
	return answer
}

// Relay relays one message or batch and returns the answer. Its error is
// a *Gone when the bridge left its server, this message having met the
// failure or come later: the message is then unanswered, for what serves
// next to answer (Gone.Resend).
func (b *Bridge) Relay(ctx context.Context, msg json.RawMessage) ([]byte, error) {
	if g := b.gone(); g != nil {
		return nil, g
	}
	calls := readCalls(msg)
	cancelled := 0
	for _, c := range calls { // alone or in a batch
		if c.env.Method == string(mcp.MethodNotificationCancelled) && b.modern.Cancel(c.params) {
			cancelled++
		}
	}
	if cancelled == len(calls) && cancelled > 0 {
		return nil, nil // closing their streams was the cancellation
	}
	// A 2026-07-28 listen lasts as long as its client wants: a move waits
	// for no listen (relayModern ends it there and it is opened again).
	counted := len(calls) != 1 || !mcp.IsModernProtocol(calls[0].version) || calls[0].env.Method != string(mcp.MethodSubscriptionsListen)
	if b.enter(counted) {
		return nil, b.forMessage(b.move(), true)
	}
	// A 2026-07-28 request is cancellable while the tools are learned too.
	sent, cancelledByClient := ctx, func() bool { return false }
	if len(calls) == 1 && mcp.IsModernProtocol(calls[0].version) && calls[0].env.IsRequest() {
		sent, cancelledByClient = b.modern.Begin(ctx, calls[0].env.ID)
	}
	fail := b.learnToolsFor(ctx, calls)
	var answer []byte
	if fail != nil {
		fail.notRun = true // the calls were not sent
	} else if sent.Err() == nil || ctx.Err() != nil { // else its client cancelled it: not sent
		b.noteAnnouncing(calls, true)
		answer, fail = b.relay(sent, msg, calls)
	}
	if cancelledByClient() {
		answer, fail = nil, nil // answered nothing, sent or not
	}
	if counted {
		b.inflight.Add(-1)
	}
	b.noteAnnouncing(calls, fail != nil && !fail.notRun)
	if fail == nil {
		if b.drained() { // this answer said so: the next message goes to the current server
			b.mu.Lock()
			b.goLocked(func() { b.move() })
			b.mu.Unlock()
		}
		return answer, nil
	}
	if ctx.Err() != nil {
		return wire.Unavailable(msg, context.Cause(ctx)), nil
	}
	if fail.moved && !b.refusedAsLost() {
		// a call of this bridge is still in flight there: the bridge moves
		// once it ended, never with one in flight, and this message goes
		// with the move
		select {
		case <-b.done:
			return nil, b.gone()
		case <-ctx.Done():
			return wire.Unavailable(msg, context.Cause(ctx)), nil
		}
	}
	return nil, b.forMessage(b.leave(fail.cause), fail.notRun)
}

// goLocked runs f on a goroutine of the bridge's background, which Close
// waits for, unless the bridge no longer relays (b.mu held): once it left
// or was closed, nothing more starts there.
func (b *Bridge) goLocked(f func()) {
	if b.left == nil && !b.closed {
		b.wg.Go(f)
	}
}

// Close ends the session on the server (DELETE, errors ignored) while the
// bridge still relays to it, and stops the bridge's background and waits
// for it; for a session being opened again, a probe timeout at most. Only
// leaveLater outlives it. Later calls do nothing.
func (b *Bridge) Close() {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true // from now on the stream and the heartbeat re-open nothing
		b.mu.Unlock()
		b.awaitOpening() // the session an initialize under way opens is then known, and ended
		if !b.reinitMu.TryLock() {
			// the session is being opened again: stopped, it goes on
			// without reinit, and is ended once answered (openAgain)
			b.cancel()
			b.reinitMu.Lock()
		}
		b.mu.Lock()
		relaying, sid, proto, left := b.left == nil, b.session, b.record.Protocol, b.left
		b.mu.Unlock()
		b.reinitMu.Unlock()
		if relaying && sid != "" {
			b.endSession(sid, proto, closingWait)
		}
		b.cancel()
		b.wg.Wait()
		b.markDone()
		b.posts.closeIdle()
		level := zap.InfoLevel
		if left != nil && errors.As(left.Cause, new(*FullServer)) {
			level = zap.DebugLevel // refused as full: the machine says what follows, once
		}
		b.log.Log(level, "bridge closed", zap.String("url", b.cfg.URL))
	})
}

// closingWait bounds the DELETE a closing bridge sends: its process is
// exiting, and a host waits for it; a live server answers at once, and a
// frozen one, which never does, ends the session at its idle timeout.
const closingWait = 250 * time.Millisecond

// endSession ends session sid on the server (DELETE, errors ignored), within
// the probe timeout, or within (when shorter): a live server answers one at
// once. It reports whether nothing is left to end: the server answered, or
// refused the connection (it is gone, and its sessions with it).
func (b *Bridge) endSession(sid, proto string, within time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), min(b.cfg.ProbeTimeout, within))
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, b.endpoint, nil) // New checked the endpoint
	b.setHeaders(req.Header, sid, proto)
	resp, err := b.client.Do(req)
	if err != nil {
		return rawio.Refused(err)
	}
	resp.Body.Close()
	return true
}

// leaveLater ends the session sid the bridge left on a server that failed
// (stopped or frozen, say) once that server answers again, trying every
// second until the bridge's ctx ends, closed or not. Otherwise a
// server that lost its lease meanwhile would keep the session, and serve
// on for nobody, until its idle timeout; which is also why it tries for
// that long at most: the server has ended the session by itself by then.
// A call of the bridge still in flight there is not cut short: a server
// ends a session once the calls it is answering have ended (httpserver).
func (b *Bridge) leaveLater(sid, proto string) {
	go func() {
		until := time.Now().Add(b.cfg.IdleTimeout)
		ctx, cancel := context.WithDeadline(b.parent, until)
		defer cancel()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for !b.endSession(sid, proto, b.cfg.ProbeTimeout) {
			select {
			case <-tick.C:
			case <-ctx.Done():
			}
			switch {
			case b.parent.Err() != nil:
				return
			case !time.Now().Before(until): // also when a try took until then, or a tick came with it
				b.log.Debug("no longer trying to end the session left on the failed server: its idle timeout has passed",
					zap.String("url", b.cfg.URL), zap.Duration("idle_timeout", b.cfg.IdleTimeout))
				return
			}
		}
	}()
}

// attachedNow reports whether the bridge still relays to its server.
func (b *Bridge) attachedNow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left == nil && !b.closed
}

// PeerID is the client's peer id on the server the bridge relays to: the
// one the server gave its session ("" before it initialized).
func (b *Bridge) PeerID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.record.Peer
}
