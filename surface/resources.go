package surface

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// The fixed resources.
const (
	repositoryURI = "majordomus://repository"
	serverURI     = "majordomus://server"
)

// publishResources registers one resource per object of ix (and the fixed
// ones), and removes those of old that ix no longer has. mcp-go sends
// list_changed to every session when resources are added or removed.
func (s *Surface) publishResources(old, ix *layer.Index) {
	resources := []server.ServerResource{
		{
			Resource: mcp.NewResource(repositoryURI, "repository",
				mcp.WithResourceTitle("Checkout"),
				mcp.WithResourceDescription("The checkout's layer: kinds, counts, diagnostics, state and generation."),
				mcp.WithMIMEType("application/json")),
			Handler: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return jsonContents(req.Params.URI, repositoryReport(s.cfg.Layer.Current()))
			},
		},
		{
			Resource: mcp.NewResource(serverURI, "server",
				mcp.WithResourceTitle("Server"),
				mcp.WithResourceDescription("The process serving this session: role, URL, leaseholder, sessions, findings."),
				mcp.WithMIMEType("application/json")),
			Handler: func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				return jsonContents(req.Params.URI, s.Report())
			},
		},
	}
	for _, o := range ix.Objects {
		resources = append(resources, server.ServerResource{
			// The name is unique (it is the URI without the scheme), so the
			// listing mcp-go sorts by name is deterministic; title and
			// description are the object's own, omitted when it has none.
			Resource: mcp.NewResource(o.URI, o.URI[len(layer.URIScheme):],
				mcp.WithResourceTitle(o.Title),
				mcp.WithResourceDescription(o.Description),
				mcp.WithMIMEType("application/json")),
			Handler: objectReader(o),
		})
	}
	s.MCP.AddResources(resources...)
	if old == nil {
		return
	}
	// Gone by the exact URI: Lookup would find "kind/id" as its one
	// version "kind/id@3", and keep a resource nobody lists.
	have := make(map[string]bool, len(ix.Objects))
	for _, o := range ix.Objects {
		have[o.URI] = true
	}
	var gone []string
	for _, o := range old.Objects {
		if !have[o.URI] {
			gone = append(gone, o.URI)
		}
	}
	if len(gone) > 0 {
		s.MCP.DeleteResources(gone...)
	}
}

// objectReader answers resources/read of o as its index was published:
// the layer serves the next index a moment before it is published here,
// and a read meanwhile answers the object its listing names, never an
// error of its handler (mcp-go answers every one -32603).
func objectReader(o layer.Object) server.ResourceHandlerFunc {
	return func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return jsonContents(o.URI, objectView(o))
	}
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	b, err := textJSON(v)
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

// subscriptions tracks which sessions asked for resources/updated.
type subscriptions struct {
	mu    sync.Mutex
	byURI map[string]map[string]bool
	held  map[string]int  // session -> how many subscriptions it holds
	deaf  map[string]bool // sessions whose client read none of their updates lately
}

// maxCarriedAbsent bounds the subscriptions a session holds past which a
// carried one to a resource not served now is not kept: what a bridge
// carries (carry.Hearing's bound).
const maxCarriedAbsent = 1 << 14

// subscribed records a subscription to a resource this surface serves, by
// the URI it is listed and updated under: mcp-go takes any URI, and one
// made up is kept nowhere (each would stay until its session ends), nor
// is an object's without its version, which is never updated. A
// subscription carried from another server is kept though nothing is
// served under its URI now, up to maxCarriedAbsent: its object may have
// been removed after it was asked for (a checkout switched), and the
// server it came from kept it and would have told its client of the
// object's return. What is carried is what the client asked, so one that
// server never kept (to an object absent already) is kept here too: a
// client moved by a take-over may hear of more than it would have. A
// session that ended while its subscribe was answered keeps none: its end
// is heard on the board before its subscriptions are dropped.
func (s *Surface) subscribed(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
	uri := req.Params.URI
	o, object := s.cfg.Layer.Current().Lookup(uri)
	session := server.ClientSessionFromContext(ctx)
	served := object && o.URI == uri || uri == repositoryURI || uri == serverURI
	if session == nil || !served && !(s.carrying(ctx) && s.subs.holds(session.SessionID()) < maxCarriedAbsent) {
		return
	}
	s.subs.add(uri, session.SessionID())
	if s.Board.PeerID(session.SessionID()) == "" {
		s.subs.remove(uri, session.SessionID())
	}
}

func (s *Surface) unsubscribed(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
	if session := server.ClientSessionFromContext(ctx); session != nil {
		s.subs.remove(req.Params.URI, session.SessionID())
	}
}

func (s *subscriptions) add(uri, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byURI[uri] == nil {
		s.byURI[uri] = map[string]bool{}
	}
	if !s.byURI[uri][session] {
		s.held[session]++
	}
	s.byURI[uri][session] = true
}

// holds is how many subscriptions session holds.
func (s *subscriptions) holds(session string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[session]
}

func (s *subscriptions) remove(uri, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(uri, session)
}

func (s *subscriptions) drop(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uri := range s.byURI {
		s.removeLocked(uri, session)
	}
	delete(s.deaf, session)
}

// isDeaf says whether session's client read none of its updates lately.
func (s *subscriptions) isDeaf(session string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deaf[session]
}

// hear notes whether session's client reads its updates.
func (s *subscriptions) hear(session string, reads bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reads {
		delete(s.deaf, session)
	} else {
		s.deaf[session] = true
	}
}

// removeLocked ends one subscription, and forgets a URI nobody holds.
func (s *subscriptions) removeLocked(uri, session string) {
	if s.byURI[uri][session] {
		if s.held[session]--; s.held[session] == 0 {
			delete(s.held, session)
		}
	}
	delete(s.byURI[uri], session)
	if len(s.byURI[uri]) == 0 {
		delete(s.byURI, uri)
	}
}

func (s *subscriptions) subscribers(uri string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.byURI[uri]))
}

// stallBound is how long a session's notifications may stay queued, full,
// before its client is taken to read none: a client that reads takes a
// queue of them (mcp-go's holds 100) in milliseconds.
const stallBound = 200 * time.Millisecond

// updates sends one rebuild's resources/updated notifications. mcp-go
// refuses one when its session's queue is full, as it is when more
// subscribed objects change at once (a checkout switched) than it holds:
// the send is then tried again as the queue drains. A session whose client
// reads nothing for stallBound (a direct HTTP client with no stream open)
// is deaf from then on: what its queue has no room for is dropped without
// a wait, this rebuild and the next ones, until it takes one again.
type updates struct {
	s       *Surface
	dropped map[string]int  // session -> updates not sent
	deafNow map[string]bool // sessions found deaf by this rebuild
}

func (u *updates) send(session, uri string) {
	u.deliver(session, u.s.subs.isDeaf(session), func(reads bool) { u.s.subs.hear(session, reads) }, func() error {
		return u.s.MCP.SendNotificationToSpecificClient(session, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
	})
}

// deliver makes try, one send to who, until it is sent, or its receiver is
// gone (nil error), or its queue has stayed full for stallBound: who is then
// deaf, and hear says so. What a deaf receiver has no room for is dropped
// without a wait.
func (u *updates) deliver(who string, deaf bool, hear func(reads bool), try func() error) {
	since := time.Now()
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		err := try()
		if !errors.Is(err, server.ErrNotificationChannelBlocked) { // sent, or the receiver is gone
			if deaf {
				hear(true)
			}
			return
		}
		if !deaf && time.Since(since) > stallBound {
			deaf = true
			hear(false)
			u.deafNow[who] = true
		}
		if deaf {
			u.dropped[who]++
			return
		}
		time.Sleep(pause) // mcp-go offers nothing to wait on
	}
}

// report says which sessions lost updates: at warn the first time.
func (u *updates) report() {
	for session, n := range u.dropped {
		level := zap.DebugLevel
		if u.deafNow[session] {
			level = zap.WarnLevel
		}
		u.s.log.Log(level, "a session's client reads no notifications: resources/updated not sent to it until it does",
			zap.String("session", session), zap.Int("dropped", n))
	}
}
