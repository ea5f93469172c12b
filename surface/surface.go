package surface

import (
	"cmp"
	"context"
	"encoding/json"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// Name is the server name every session sees in initialize.
const Name = "majordomus"

// LayerSource gives the index to answer from. Current is called once per
// answer and must be safe for concurrent use.
type LayerSource interface {
	Current() *layer.Index
	// Withheld says why the layer on disk is not the one served, or "".
	Withheld() string
}

// Process describes the process serving the surface, for majordomus_server
// and the instructions. It is supplied by the caller because only the caller
// knows its role.
type Process struct {
	Role        string   `json:"role"`        // standalone, leaseholder, lease-lost, alone
	URL         string   `json:"url"`         // the shared server's URL; "" when none serves this session
	Leaseholder bool     `json:"leaseholder"` // this process holds the checkout's lease
	LeasePath   string   `json:"lease_path"`  // "" when this process uses no lease
	Profile     string   `json:"profile"`
	Findings    []string `json:"findings"`
	// Alone is why this process serves its client alone because sharing
	// failed; "" when it does not. The client is told (see alone.go).
	Alone string `json:"alone,omitempty"`
	// HTTPSessions is how many of the sessions the surface serves
	// ([Surface.Sessions]) are its process's HTTP server's.
	HTTPSessions int `json:"http_sessions"`
}

// Config configures a Surface.
type Config struct {
	Layer   LayerSource
	Version string           // the binary's version, in serverInfo and majordomus_server
	Process func() Process   // nil = a standalone process
	Now     func() time.Time // nil = time.Now
	Logger  *zap.Logger      // nil = no logs
	// ServerOptions are appended to the surface's own mcp-go options (a
	// test wraps the tools' handlers this way).
	ServerOptions []server.ServerOption
	// Fleet takes the checkout's fleet inventory for majordomus_fleet_inventory
	// (its result is answered as JSON). The caller gathers it, because only
	// the caller can observe the host; nil = this process cannot take one.
	Fleet func(ctx context.Context) (any, error)
	// PeerClaim is the peer id the context of a session's opening, or of
	// its initialize, claims for it (a client carried from another server
	// keeps its id), or ""; nil = no claims. CarriedAnnouncement is the
	// announcement (majordomus_announce's arguments) such a context
	// brings with it, or nil: the peer is on the board with it at once.
	PeerClaim           func(ctx context.Context) string
	CarriedAnnouncement func(ctx context.Context) json.RawMessage
	// Session is the session the client of a 2026-07-28 request handled
	// under ctx opened too (a bridge relaying a client that speaks both
	// revisions names it), or "": when it is on the board, its peer is the
	// request's, as an in-process client's one session is. nil = none.
	Session func(ctx context.Context) string
	// Carrying reports whether a message handled under ctx carries a
	// session (a replay by the process that carries it): only then are
	// its ReplayMeta and HistoryMeta heeded, never in what a client wrote.
	// nil = never.
	Carrying func(ctx context.Context) bool
	// Call is the key of the tool call a message handled under ctx makes,
	// kept in the history once however often it is sent, or ""; nil = none.
	Call func(ctx context.Context) string
	// PresenceID is the request id of the subscriptions/listen a bridge
	// holds open for its 2026-07-28 client while its process lives: that
	// peer leaves the board as soon as the stream ends. "" = none.
	PresenceID string
	// PeerNumbers draws the number of a new peer from a counter the
	// checkout's servers share, so that ids stay unique across take-overs:
	// the next, and never below atLeast, which it counts as given then;
	// nil, or an error, numbers peers on this board alone.
	PeerNumbers func(atLeast int) (int, error)
	// IdleTimeout is how long a peer known from its requests alone (a
	// 2026-07-28 client over HTTP) stays on the board unheard with no
	// subscriptions/listen stream open: the HTTP server's idle timeout.
	// Required.
	IdleTimeout time.Duration
	// LogLinesDropped counts the log lines this process's stderr lost
	// because its host did not read them; nil = none.
	LogLinesDropped func() uint64
}

// PeerMeta is the key under which an initialize result's _meta gives the
// session's peer id, for a bridge to carry to the next server, and under
// which a 2026-07-28 request's _meta claims its peer's id (a bridge sends
// its stdio client's with every request it relays).
const PeerMeta = "io.majordomus/peer"

// AnnouncedMeta is the key under which an initialize result's _meta says
// (true) that the announcement its session carried is on the board, so
// that the bridge that opened it need not make it again.
const AnnouncedMeta = "io.majordomus/announced"

// ReplayMeta is the key under which a majordomus_announce call's _meta
// says (true) that it makes a carried announcement again, on a server
// that did not take it with the session (a 2026-07-28 client has none): it
// is not an execution, and an announcement the same as the peer's keeps
// its time. It hides nothing else: a client that sets it on its own call
// hides only that announcement's call, never the announcement itself.
const ReplayMeta = "io.majordomus/replay"

// Surface is the MCP server of one process and its peer board.
type Surface struct {
	MCP        *server.MCPServer
	Board      *Board
	Executions *Executions

	cfg     Config
	log     *zap.Logger
	started time.Time
	subs    subscriptions
	listens listens
	prompts atomic.Pointer[map[string]layer.Object] // the published prompts by name, for completions
	changes *changes
	kept    atomic.Pointer[func(line []byte) bool] // Keep's sink, for the layer's generations; nil while not kept
	// declared is Greeting's Declared, made once.
	declared func() string
}

// New builds the MCP server with every tool and resource of the layer.
func New(cfg Config) *Surface {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Process == nil {
		cfg.Process = func() Process { return Process{Role: "standalone", Profile: "default"} }
	}
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	c := &changes{}
	board := newBoard(cfg.Now, cfg.IdleTimeout, cfg.PeerNumbers, c)
	if cfg.Layer != nil && cfg.Layer.Current().Root != "" {
		board.root = path.Clean(filepath.ToSlash(cfg.Layer.Current().Root))
	}
	s := &Surface{
		Board:      board,
		Executions: &Executions{changes: c},
		changes:    c,
		cfg:        cfg,
		log:        cfg.Logger,
		started:    cfg.Now(),
		subs:       subscriptions{byURI: map[string]map[string]bool{}, held: map[string]int{}, deaf: map[string]bool{}},
		declared:   sync.OnceValue(func() string { return declaredBy(cfg.Version) }),
	}
	hooks := &server.Hooks{}
	hooks.AddOnRegisterSession(s.sessionOpened)
	hooks.AddOnUnregisterSession(s.sessionClosed)
	hooks.AddBeforeAny(s.heard)
	hooks.AddAfterInitialize(s.initialized)
	hooks.AddAfterSubscribe(s.subscribed)
	hooks.AddAfterUnsubscribe(s.unsubscribed)
	s.modernHooks(hooks)

	opts := append(declared(),
		server.WithPromptCompletionProvider(promptCompleter{s}),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolHandlerMiddleware(s.recordExecution),
	)
	s.MCP = server.NewMCPServer(Name, cfg.Version, append(opts, cfg.ServerOptions...)...)
	s.MCP.AddNotificationHandler(string(mcp.MethodNotificationInitialized), s.clientInitialized)
	s.addTools()
	ix := cfg.Layer.Current()
	s.publishResources(nil, ix)
	s.publishPrompts(nil, ix)
	return s
}

// transportOf names how a session's client is connected: a session that
// knows it says (the in-process stdio session); others are HTTP sessions.
func transportOf(session server.ClientSession) string {
	if t, ok := session.(interface{ Transport() string }); ok {
		return t.Transport()
	}
	return "http"
}

func (s *Surface) sessionOpened(ctx context.Context, session server.ClientSession) {
	if ctx.Err() != nil {
		// registered by a request that had already ended: mcp-go's GET
		// handler opens a session again when the DELETE that ended it
		// came between our check of the id and its lookup. No client is
		// there, and none is put on the board.
		return
	}
	transport, id := s.attach(ctx, session)
	// announced: a carried session is on the board with its announcement
	// from its first instant
	s.log.Info("session opened", zap.String("session", session.SessionID()), zap.String("peer", id), zap.String("transport", transport),
		zap.Bool("announced", s.Board.announced(session.SessionID())))
}

// attach puts a session's peer on the board, once, under the id its
// context claims and with the announcement it carries. An HTTP session is
// registered by mcp-go only after its initialize was answered, so the
// initialize hook attaches it first; the in-process session is registered
// before its client says anything.
func (s *Surface) attach(ctx context.Context, session server.ClientSession) (transport, peer string) {
	transport = transportOf(session)
	claim, announced := s.carried(ctx)
	return transport, s.Board.Open(session.SessionID(), transport, claim, announced)
}

// carried is what ctx says a session opened again carries: its claimed
// peer id and its announcement (nil when none, or not one).
func (s *Surface) carried(ctx context.Context) (claim string, announced *Announcement) {
	if s.cfg.PeerClaim != nil {
		claim = s.cfg.PeerClaim(ctx)
	}
	if s.cfg.CarriedAnnouncement != nil {
		announced = announcementOf(s.cfg.CarriedAnnouncement(ctx))
	}
	return claim, announced
}

func (s *Surface) sessionClosed(_ context.Context, session server.ClientSession) {
	id := s.Board.PeerID(session.SessionID())
	s.Board.Detach(session.SessionID())
	s.subs.drop(session.SessionID())
	if id != "" {
		s.log.Info("session closed", zap.String("session", session.SessionID()), zap.String("peer", id))
	}
}

func (s *Surface) heard(ctx context.Context, _ any, _ mcp.MCPMethod, _ any) {
	if session := server.ClientSessionFromContext(ctx); session != nil {
		s.Board.Touch(session.SessionID())
	}
}

func (s *Surface) initialized(ctx context.Context, _ any, req *mcp.InitializeRequest, result *mcp.InitializeResult) {
	session := server.ClientSessionFromContext(ctx)
	if session == nil {
		return
	}
	s.attach(ctx, session)
	// An initialize opens the session afresh: what it subscribed to before
	// is not kept, as a bridge's second initialize opens a new session on
	// the server and a carried session records nothing from before it
	// (carry.Hearing), so that the client hears the same in every mode and
	// after a take-over (R8).
	s.subs.drop(session.SessionID())
	// What the process says about sharing is sent at warning; mcp-go's
	// sessions start (and restart at every initialize) at error. A client's
	// logging/setLevel, which comes after, still decides.
	if l, ok := session.(server.SessionWithLogging); ok {
		l.SetLogLevel(mcp.LoggingLevelWarning)
	}
	claim, announced := s.carried(ctx)
	if claim != "" && !s.Board.Claim(session.SessionID(), claim) {
		s.log.Info("a claimed peer id was not granted", zap.String("claim", quoted(claim)), zap.String("peer", s.Board.PeerID(session.SessionID())))
	}
	info := req.Params.ClientInfo
	s.Board.Identify(session.SessionID(), Client{Name: info.Name, Version: info.Version, Title: info.Title})
	peer := s.Board.PeerID(session.SessionID())
	result.Meta = &mcp.Meta{AdditionalFields: map[string]any{PeerMeta: peer}}
	if announced != nil {
		// on the board since the session opened, or made now
		_, _, _ = s.Board.Announce(session.SessionID(), announced.Intent, announced.Scope, true)
		result.Meta.AdditionalFields[AnnouncedMeta] = true
	}
	s.log.Info("peer initialized", zap.String("peer", peer), zap.String("client", inline(info.Name, maxQuoted)), zap.String("client_version", inline(info.Version, maxQuoted)))
	result.Instructions = s.instructions(peer)
}

// instructions are what a session's client is told at initialize.
func (s *Surface) instructions(peer string) string {
	ix := s.cfg.Layer.Current()
	proc := s.cfg.Process()
	return told{peer, ix.Name, len(ix.Objects), ix.State(), s.Board.Summary(), proc.URL, proc.Alone}.instructions()
}

// Notify sends a log message to every session, as the host shows it to the
// user: what the process says about sharing reaches the people affected.
func (s *Surface) Notify(level mcp.LoggingLevel, message string) {
	for _, session := range s.Board.sessions() {
		_ = s.MCP.SendLogMessageToSpecificClient(session, mcp.NewLoggingMessageNotification(level, "majordomus", message))
	}
}

// IndexChanged republishes the resources and prompts of a rebuilt index
// and tells the sessions: resources/list_changed to all, prompts/list_changed
// to all when a prompt was added, removed or changed, resources/updated to
// subscribers of what changed.
func (s *Surface) IndexChanged(old, new *layer.Index) {
	s.Republish(old, new)
	s.TellUpdated(old, new)
}

// Republish is IndexChanged's first half: the resources and prompts of
// new are served from its return, and the list_changed notifications
// queued, waiting on no session. TellUpdated, the second, may wait on a
// session that reads nothing, up to a bound: a caller that must serve the
// index before it returns tells the subscribers after.
func (s *Surface) Republish(old, new *layer.Index) {
	defer s.changes.bump()
	if sink := s.kept.Load(); sink != nil {
		g := generationOf(new)
		(*sink)(encodeRecord(record{Layer: &g}))
	}
	s.publishResources(old, new)
	s.publishPrompts(old, new)
}

// TellUpdated tells the subscribers of what changed from old to new that
// it did (resources/updated), once Republish served new.
func (s *Surface) TellUpdated(old, new *layer.Index) {
	s.tellUpdated(append(layer.Changed(old, new), repositoryURI, serverURI)) // both say the generation
}

// tellUpdated tells the subscribers and listeners of each of uris that it
// changed.
func (s *Surface) tellUpdated(uris []string) {
	updates := updates{s: s, dropped: map[string]int{}, deafNow: map[string]bool{}}
	for _, uri := range uris {
		for _, session := range s.subs.subscribers(uri) {
			updates.send(session, uri)
		}
		s.updateListeners(&updates, uri)
	}
	updates.report()
}

// Sessions counts every session this surface serves: each session on its
// board (its process's own stdio client's, in process, and the HTTP
// sessions of the legacy revisions) and each open subscriptions/listen
// stream of a 2026-07-28 client over HTTP, which has no session but
// stays with the server through that stream. majordomus_server and the
// probe (`status`) both say this number.
func (s *Surface) Sessions() int {
	n := len(s.Board.sessions())
	s.listens.ends.Range(func(any, any) bool { n++; return true })
	return n
}

// recordExecution times every tool call but bookkeeping (ReplayMeta,
// HistoryMeta) into the history, under its peer's id as it is recorded: a
// peer numbered anew while the call ran (Keep) has it under its new id,
// whether or not its session is still there. A call of no peer (its
// session left the board first) does not run. A 2026-07-28 caller is named
// once the call ran: it was sighted as its request arrived, or by
// announcing, never on the board before its announcement (a carried
// peer's, replayed); one that came on a session on the board is that
// session's peer, as a legacy caller is.
func (s *Surface) recordExecution(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start, session := s.cfg.Now(), server.ClientSessionFromContext(ctx)
		named := func() string { return s.callerOf(ctx, req.Params.Meta) }
		if m, modern := s.modernOf(ctx, req.Params.Meta); !modern {
			var p *Peer
			if session != nil {
				p = s.Board.peerOf(session.SessionID())
			}
			if p == nil {
				return mcp.NewToolResultError("this session has ended: the call did not run; send initialize again"), nil
			}
			named = func() string { return s.Board.idOf(p) }
		} else if p := s.Board.peerOf(m.Session); m.Session != "" && p != nil {
			// its session may leave as the call runs (the in-process
			// client carried onto a bridge): sighted then, the call would
			// make a peer of its own
			named = func() string { return s.Board.idOf(p) }
		}
		own := session != nil && transportOf(session) == "stdio"
		res, err := next(ctx, req)
		if s.replayed(ctx, req) {
			return res, err
		}
		if s.carrying(ctx) && s.tookHistory(req, named(), func(x Execution) { s.Executions.recordNew(x, own) }) {
			return res, err
		}
		s.Executions.recordNamed(Execution{
			Tool:       req.Params.Name,
			At:         start.UTC(),
			DurationMS: float64(s.cfg.Now().Sub(start).Microseconds()) / 1000,
			OK:         err == nil && res != nil && !res.IsError,
			Call:       s.callOf(ctx),
		}, own, named)
		return res, err
	}
}
