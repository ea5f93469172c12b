package httpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Defaults of [Config].
const (
	defaultMaxBody = wire.MaxMessageBytes
	// defaultBodyTimeout bounds how long a request body may take to
	// arrive: a client sending a byte every few seconds holds nothing.
	defaultBodyTimeout = 10 * time.Second
	// DefaultMaxSessions caps the live sessions of one server; beyond it a
	// new one is refused (503, Retry-After) rather than exhaust memory.
	DefaultMaxSessions = 512
	// connectionsPerSession caps the open connections, so that whoever can
	// reach the port (another local user too, before any token is asked)
	// cannot exhaust the server's descriptors; those without the token
	// make room for a newcomer (connCount.admit). A session takes at most
	// two (a POST, its stream): a cap of sessions raised raises it too,
	// and one lowered leaves it at the default's, as a bridge's presence,
	// which takes no place, is bounded by the connections alone. Nor does
	// it pass half the files the process may open (openFilesLimit): were
	// its connections to take the last descriptor, nobody would be
	// accepted, and none of them closed to make room.
	connectionsPerSession = 4
	// maxHeaderBytes bounds a request's head: no client of this server
	// sends more than a few hundred bytes of it.
	maxHeaderBytes = 64 << 10
)

// Refusal says why new sessions are refused.
type Refusal struct {
	Reason  string // machine-readable reason, in the error's data; default "lease_lost"
	Message string // what the client is told
	URL     string // the server to go to instead; "" when not known
}

// Config configures a [Server].
type Config struct {
	// MCP serves every session. Its hooks belong to its builder: the HTTP
	// server learns of sessions through its own SessionIdManager instead.
	MCP *server.MCPServer
	// Identity is asked on every GET /; peers says whether the answer
	// carries the board's peers, which only a token holder's plain GET /
	// does (a probe's answer never does). Nil answers a zero Identity.
	Identity func(peers bool) Identity
	// Secret is the lease's secret (internal/secret): every /mcp request
	// must carry its token, and GET / proves it holds it. Empty: a random
	// one that no client knows, so that no server is ever open by mistake.
	Secret string
	// Refusal is asked on every initialize, on every 2026-07-28 request,
	// and on every bridge's tool call, before and after it runs: nil
	// accepts them, a refusal turns new sessions away and sends a bridge's
	// call to the current server (409 lease_lost, or that revision's
	// lease-lost error); existing sessions go on being served otherwise.
	Refusal func() *Refusal
	// IdleTimeout ends a session that has sent nothing for that long.
	// Default 90s.
	IdleTimeout time.Duration
	// MaxBody bounds a request body, in bytes. Default 1 MiB.
	MaxBody int64
	// BodyTimeout bounds the arrival of a request body. Default 10s.
	BodyTimeout time.Duration
	// ListenKeepAlive is how long a 2026-07-28 listen stream stays silent
	// before a comment is written on it. Default DefaultListenKeepAlive.
	ListenKeepAlive time.Duration
	// StreamEndBound is how long a stream EndStreams ends stays open when
	// its writer does not reach the mark (a POST in flight took it).
	// Default a second.
	StreamEndBound time.Duration
	// MaxSessions caps the live sessions. Default 512, and at most a
	// quarter of the connections when MaxConnections is the default's.
	MaxSessions int
	// MaxConnections caps the open connections. Default four for each
	// session of MaxSessions, or of DefaultMaxSessions when that is more: a
	// session takes two at most, and a bridge's presence one; and at most
	// half the files the process may open.
	MaxConnections int
	// OnSessions is called with the number of live HTTP sessions whenever
	// it changes (open listens count, and after EndStreams so do the
	// 2026-07-28 calls being answered). Calls are serialised and never
	// made under a lock of the server, so it may call back into it; under
	// concurrent changes an intermediate count may be skipped, the latest
	// never is.
	OnSessions func(n int)
	// Greeting, when set, is what the answer to a challenge carries,
	// sealed, for a prover that asks: what its client is greeted with.
	Greeting func() any
	// Board serves everything under /board (package transport/board),
	// once the Host and Origin are checked; nil = no page, 404. Its
	// requests end at Shutdown, its event streams included.
	Board http.Handler
	// PresenceID is the request id of the subscriptions/listen a bridge
	// holds open for its 2026-07-28 client (EndStreams ends it). Empty:
	// none is told apart.
	PresenceID string
	// Leaving is told of a session its client ended (DELETE) while a
	// request of its is answered: it ends once that has, and may give up
	// meanwhile what a session opened next claims. Nil: nobody.
	Leaving func(session string)
	// Heard is told of each ping the server answers itself (that of a
	// session with its stream open), as mcp-go's hooks are told of the
	// requests it answers. Nil: nobody.
	Heard func(session string)
	// Logger receives the server's logs and mcp-go's (named "mcp-go").
	// Nil = no logs.
	Logger *zap.Logger
}

// Server is the shared server: identity on GET /, MCP streamable HTTP
// on /mcp, every refusal a JSON body.
type Server struct {
	cfg     Config
	log     *zap.Logger
	refused *zap.Logger // log, Quiet: for the refusals anyone may cause
	mcp     *server.StreamableHTTPServer
	table   *sessionTable
	cop     *http.CrossOriginProtection
	srv     *http.Server

	stopping context.Context // ended by Shutdown: so are the streams untilStopped gives it
	stop     context.CancelFunc

	conns    connCount
	closing  atomic.Bool
	fullSaid atomic.Bool // a refusal as full was logged at info since a session was last admitted
	shutOnce sync.Once
	shutErr  error
}

// positiveOr is v, or d when v is zero or negative: a Config's unset bound.
func positiveOr[T ~int | ~int64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// New builds the server. Call Shutdown to stop it, even when it
// never served: it ends the sessions and their idle timers.
func New(cfg Config) *Server {
	cfg.IdleTimeout = positiveOr(cfg.IdleTimeout, wire.DefaultIdleTimeout)
	cfg.MaxBody = positiveOr(cfg.MaxBody, defaultMaxBody)
	cfg.BodyTimeout = positiveOr(cfg.BodyTimeout, defaultBodyTimeout)
	cfg.ListenKeepAlive = positiveOr(cfg.ListenKeepAlive, DefaultListenKeepAlive)
	cfg.StreamEndBound = positiveOr(cfg.StreamEndBound, time.Second)
	cfg.MaxSessions = positiveOr(cfg.MaxSessions, DefaultMaxSessions)
	asked := cfg.MaxSessions
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = min(connectionsPerSession*min(max(cfg.MaxSessions, DefaultMaxSessions), math.MaxInt/connectionsPerSession),
			max(openFilesLimit()/2, 1))
		// Held down by the files, the connections still hold every session:
		// a server is full (503) before its sessions take every connection,
		// where a newcomer's probe would be closed as it comes and force a
		// take-over of a server that only had too many clients.
		cfg.MaxSessions = min(cfg.MaxSessions, max(cfg.MaxConnections/connectionsPerSession, 1))
	}
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	if cfg.MaxSessions < asked {
		cfg.Logger.Warn("the open-file limit holds this server's sessions down: it is full at fewer sessions than asked",
			zap.Int("max_sessions", cfg.MaxSessions), zap.Int("asked", asked), zap.Int("max_connections", cfg.MaxConnections))
	}
	if cfg.Identity == nil {
		cfg.Identity = func(bool) Identity { return Identity{} }
	}
	if cfg.Refusal == nil {
		cfg.Refusal = func() *Refusal { return nil }
	}
	if cfg.Secret == "" {
		cfg.Secret = secret.New()
	}
	h := &Server{cfg: cfg, log: cfg.Logger, refused: Quiet(cfg.Logger), cop: http.NewCrossOriginProtection()}
	h.stopping, h.stop = context.WithCancel(context.Background())
	h.table = newSessionTable(cfg.Logger, cfg.OnSessions, cfg.IdleTimeout, func(sid string) { h.endSession(sid, endIdle) })
	mcpLog := slog.New(zapslog.NewHandler(cfg.Logger.Core(), zapslog.WithName("mcp-go")))
	h.mcp = server.NewStreamableHTTPServer(cfg.MCP,
		server.WithSessionIdManager(h.table), // which also ends idle sessions
		server.WithHTTPContextFunc(carry.ClaimOf),

		server.WithStreamableHTTPLogger(mcpLog),
	)
	errorLog, _ := zap.NewStdLogAt(cfg.Logger.Named("http"), zapcore.DebugLevel)
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          errorLog,
		ConnState:         h.conns.track,
		ConnContext:       withConn,
	}
	h.srv.RegisterOnShutdown(h.conns.closeUnproven) // once it no longer accepts
	return h
}

// Serve answers on ln until Shutdown; it then returns nil.
func (h *Server) Serve(ln net.Listener) error {
	if err := h.srv.Serve(cappedListener{ln, &h.conns, h.cfg.MaxConnections}); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Sessions is the number of live HTTP sessions.
func (h *Server) Sessions() int { return h.table.count() }

// EndStreams ends every session's GET stream and every bridge's presence,
// keeping the sessions, each stream once it has written what its session
// was told before (the lost lease's notice). A server that lost its lease
// calls it: a bridge whose stream ends with no call in flight moves to the
// current server at once, not at its heartbeat, and the server drains; a
// client that opens its stream again is served as before. From then on
// OnSessions counts the 2026-07-28 calls being answered too, which belong
// to no session: the server drains them as well.
func (h *Server) EndStreams() {
	for sid, end := range h.table.endStreams() {
		// What the session was told before (the lease lost) is written
		// before its stream ends: the mark comes after it, and the stream
		// ends as it reaches its writer (endsAtMark), or after a bound.
		if h.cfg.MCP.SendNotificationToSpecificClient(sid, streamEndMethod, nil) != nil {
			end()
			continue
		}
		time.AfterFunc(h.cfg.StreamEndBound, end)
	}
}

// Shutdown ends every session and its streams, stops listening and waits
// for the requests under way until ctx ends; then it closes what is left.
// Later calls return the first call's result.
func (h *Server) Shutdown(ctx context.Context) error {
	h.shutOnce.Do(func() {
		h.closing.Store(true)
		h.stop()
		h.table.shutdown(ctx)   // the calls under way end on their sessions
		_ = h.mcp.Shutdown(ctx) // stops the sweeper, ends streams and sessions
		if err := h.srv.Shutdown(ctx); err != nil {
			h.shutErr = err
			_ = h.srv.Close()
		}
		h.mcp.CloseSessions(context.Background()) // any opened meanwhile
	})
	return h.shutErr
}

// ServeHTTP routes a request: GET /, /mcp and /board; anything else is 404. Only a
// POST to /mcp has a body worth reading: any other request's body is never
// waited for, and its connection closes with the answer.
func (h *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 && (r.Method != http.MethodPost || r.URL.Path != "/mcp") {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	if !hostAllowed(r) {
		h.refused.Warn("a loopback request under a foreign host name was refused", zap.String("host", heard(r.Host)))
		refuseUnread(w, r, http.StatusForbidden, errCodeForbidden,
			fmt.Sprintf("the Host header %q does not name this loopback server (DNS rebinding is refused)", heard(r.Host)))
		return
	}
	switch {
	case r.URL.Path == "/":
		h.serveIdentity(w, r)
	case r.URL.Path == "/mcp":
		h.serveMCP(w, r)
	case h.cfg.Board != nil && (r.URL.Path == "/board" || strings.HasPrefix(r.URL.Path, "/board/")):
		h.serveBoard(w, r)
	default:
		writeError(w, http.StatusNotFound, errCodeNotFound,
			fmt.Sprintf("no route %s %s; this server answers GET / (its identity), /mcp (MCP) and /board (its page)", r.Method, r.URL.Path))
	}
}

// authorized reports whether r carries the lease's token, and if so
// counts its connection proven (connCount.prove); a request whose
// connection was closed to make room is not, and so is not run.
func (h *Server) authorized(r *http.Request) bool {
	return secret.Authorized(r.Header.Get("Authorization"), h.cfg.Secret) && h.conns.prove(connOf(r))
}

// serveBoard hands /board to the page after the Host and Origin checks of
// /mcp; its request ends at Shutdown at the latest.
func (h *Server) serveBoard(w http.ResponseWriter, r *http.Request) {
	if err := h.originAllowed(r); err != nil {
		h.refused.Warn("a board request from another origin was refused", zap.Error(err))
		writeError(w, http.StatusForbidden, errCodeForbidden, "a request from another origin was refused: "+err.Error())
		return
	}
	if keyed, ok := h.cfg.Board.(keyedBoard); ok && keyed.Admits(r) && !h.conns.prove(connOf(r)) {
		return // closed to make room: nobody hears it, and nothing is drawn for nobody
	}
	r, done := h.untilStopped(r)
	defer done()
	h.cfg.Board.ServeHTTP(w, r)
}

// untilStopped is r with a context Shutdown ends too, for a stream that
// would otherwise wait for its client to leave; done ends it.
func (h *Server) untilStopped(r *http.Request) (_ *http.Request, done context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	unhook := context.AfterFunc(h.stopping, cancel)
	return r.WithContext(ctx), func() { unhook(); cancel() }
}

// keyedBoard is a board page that tells whether a request carries one of
// its keys: the owner's page, whose connection keeps its place.
type keyedBoard interface{ Admits(r *http.Request) bool }

// originAllowed refuses requests a browser sends from another origin: the
// stdlib check for state-changing methods, and for every method an Origin
// header that does not name this server.
func (h *Server) originAllowed(r *http.Request) error {
	if err := h.cop.Check(r); err != nil {
		return err
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Errorf("origin %q is not this server's", heard(origin))
	}
	return nil
}

// heard is what a caller sent, as a log line or an answer quotes it: its
// first 128 bytes. Anyone who can reach the port, token or not, can send a
// header of 64 KiB with every request.
func heard(s string) string {
	if len(s) <= 128 {
		return s
	}
	return strings.ToValidUTF8(s[:128], "") + "…"
}
