package surface

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
)

// The board's side of the 2026-07-28 revision: every modern request is
// sighted on the board before mcp-go serves it, and a subscriptions/listen
// stream keeps its peer while it is open.

// listens holds what ends each open listen stream's hold on its peer, and
// the objects it subscribed to, by the stream's session and request id (an
// HTTP stream has a session of its own; an in-process one shares its
// session with other requests).
type listens struct {
	ends sync.Map // listenKey → func()
	subs sync.Map // listenKey → listenSubs
	deaf sync.Map // a listen's queue → true: its client read none of its updates lately (updates)
}

// listenSubs is what an open listen asked resources/updated for: the URIs,
// and its id, which tags what it hears.
type listenSubs struct {
	id   any
	uris []string
}

type listenKey struct {
	session server.ClientSession
	id      string
}

func listenKeyOf(ctx context.Context, id any) listenKey {
	return listenKey{server.ClientSessionFromContext(ctx), fmt.Sprintf("%T %v", id, id)}
}

// idIs reports whether a request's id, as mcp-go's hooks give it, is the
// string want.
func idIs(id any, want string) bool {
	switch v := id.(type) {
	case string:
		return v == want
	case mcp.RequestId:
		s, ok := v.Value().(string)
		return ok && s == want
	case *mcp.RequestId:
		return v != nil && idIs(*v, want)
	}
	return false
}

// modernHooks adds the hooks that keep the board for modern requests.
func (s *Surface) modernHooks(hooks *server.Hooks) {
	hooks.AddOnRequestInitialization(s.requestArrived)
	hooks.AddAfterDiscover(s.discovered)
	hooks.AddBeforeSubscriptionsListen(s.listenOpened)
	hooks.AddOnSuccess(func(ctx context.Context, id any, method mcp.MCPMethod, _, _ any) {
		s.requestEnded(ctx, id, method)
	})
	hooks.AddOnError(func(ctx context.Context, id any, method mcp.MCPMethod, _ any, _ error) {
		s.requestEnded(ctx, id, method)
	})
}

// modernOf reads a request's _meta as the board does; it is false for a
// request that is not of a modern revision, or whose _meta mcp-go refuses
// (an unknown version, no client capabilities), so that such a request
// adds no peer.
func (s *Surface) modernOf(ctx context.Context, meta *mcp.Meta) (ModernRequest, bool) {
	v := meta.ProtocolVersion()
	if !mcp.IsModernProtocol(v) || !mcp.IsValidProtocolVersion(v) || meta.ClientCapabilities() == nil {
		return ModernRequest{}, false
	}
	m := ModernRequest{Transport: "http"}
	if session := server.ClientSessionFromContext(ctx); session != nil {
		m.Session, m.Transport = session.SessionID(), transportOf(session)
	}
	if s.cfg.Session != nil {
		if sid := s.cfg.Session(ctx); sid != "" && s.Board.PeerID(sid) != "" {
			m.Session = sid // the session its client opened too: one client, one peer
		}
	}
	if info := meta.ClientInfo(); info != nil {
		m.Client = &Client{Name: info.Name, Version: info.Version, Title: info.Title}
	}
	m.Claim, _ = meta.AdditionalFields[PeerMeta].(string)
	if s.cfg.PeerClaim != nil {
		if claim := s.cfg.PeerClaim(ctx); claim != "" {
			m.Claim = claim // a bridge's, in a header: the body is the client's as it wrote it
		}
	}
	return m, true
}

// mayBeModern reports whether a raw message may name a protocol revision
// in its _meta, as a 2026-07-28 request does: it spares the decoding of
// one that cannot. The key may be spelled with escapes (\/, or \u00XX
// for any of its ASCII characters), which a decoder reads as the key;
// the escapes text is full of (\n, \", \u of what is not ASCII) cannot.
// It scans as transport/wire's escapesASCII does, which this package, the
// surface the transport serves, may not import.
func mayBeModern(raw []byte) bool {
	if bytes.Contains(raw, []byte(mcp.MetaKeyProtocolVersion)) || bytes.Contains(raw, []byte(`\/`)) {
		return true
	}
	for rest := raw; ; {
		i := bytes.Index(rest, []byte(`\u00`))
		if i < 0 || len(rest) < i+6 {
			return false
		}
		if c := rest[i+4]; c >= '0' && c <= '7' {
			return true
		}
		rest = rest[i+4:]
	}
}

// requestArrived sights a modern request's peer. It runs for every request
// before mcp-go dispatches it, on the raw message: no later hook sees every
// method's _meta.
func (s *Surface) requestArrived(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok || !mayBeModern(raw) {
		return nil // a legacy request: its session is its peer
	}
	var r struct {
		Method string `json:"method"`
		Params struct {
			Name string    `json:"name"`
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &r) != nil {
		return nil // mcp-go answers it
	}
	m, ok := s.modernOf(ctx, r.Params.Meta)
	if !ok || (r.Method == string(mcp.MethodToolsCall) && r.Params.Name == announceTool) {
		// an announcement sights its peer and announces at once: a peer
		// carried to this server is never on its board without it
		return nil
	}
	if id := s.Board.Sight(m); m.Claim != "" && id != m.Claim && (m.Session == "" || s.Board.PeerID(m.Session) == "") {
		s.log.Debug("a claimed peer id was not granted", zap.String("claim", quoted(m.Claim)), zap.String("peer", id))
	}
	return nil
}

func (s *Surface) listenOpened(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
	m, ok := s.modernOf(ctx, req.Params.Meta)
	if !ok {
		return
	}
	listen := s.Board.Listen
	if s.cfg.PresenceID != "" && idIs(id, s.cfg.PresenceID) {
		listen = s.Board.Present // a bridge's, for its client's life
	}
	if end := listen(m); end != nil {
		s.listens.ends.Store(listenKeyOf(ctx, id), end)
	}
	if uris := req.Params.Notifications.ResourceSubscriptions; len(uris) > 0 {
		s.listens.subs.Store(listenKeyOf(ctx, id), listenSubs{id, slices.Clone(uris)})
	}
}

// updateListeners sends resources/updated for uri on every open listen
// stream that subscribed to it, tagged with the listen's id (as mcp-go tags
// what a stream of its own carries: an in-process client's listens share
// one session), as u sends it to a session. mcp-go records such a
// subscription but sends nothing of itself: the stream's session is told
// directly.
func (s *Surface) updateListeners(u *updates, uri string) {
	s.listens.subs.Range(func(k, v any) bool {
		key, subs := k.(listenKey), v.(listenSubs)
		if !slices.Contains(subs.uris, uri) {
			return true
		}
		note := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationResourceUpdated),
			Params: mcp.NotificationParams{Meta: map[string]any{mcp.MetaKeySubscriptionID: subs.id}, AdditionalFields: map[string]any{"uri": uri}},
		}}
		// Deafness is its queue's: an in-process client's listens share one.
		queue := key.session.NotificationChannel()
		_, deaf := s.listens.deaf.Load(queue)
		hear := func(reads bool) {
			if reads {
				s.listens.deaf.Delete(queue)
			} else {
				s.listens.deaf.Store(queue, true)
			}
		}
		u.deliver("listen "+key.id+" of session "+key.session.SessionID(), deaf, hear, func() error {
			if _, open := s.listens.subs.Load(key); !open {
				return nil // it ended: nobody hears it
			}
			select {
			case queue <- note:
				return nil
			default:
				return server.ErrNotificationChannelBlocked
			}
		})
		return true
	})
}

// requestEnded ends a listen stream's hold on its peer. mcp-go calls one
// of its success or error hooks for every request it began, and may call
// the error hook for one it never began: nothing is stored for that.
func (s *Surface) requestEnded(ctx context.Context, id any, method mcp.MCPMethod) {
	if method != mcp.MethodSubscriptionsListen {
		return
	}
	key := listenKeyOf(ctx, id)
	s.listens.subs.Delete(key)
	if key.session != nil {
		s.listens.deaf.Delete(key.session.NotificationChannel()) // heard again, at a wait at most
	}
	if end, ok := s.listens.ends.LoadAndDelete(key); ok {
		end.(func())()
	}
}

// discovered gives a 2026-07-28 client what a legacy one gets from
// initialize: the instructions, naming its peer id (and, served alone,
// why), and the id in _meta. Its server/discover is where such a client
// reads them.
func (s *Surface) discovered(ctx context.Context, _ any, req *mcp.DiscoverRequest, result *mcp.DiscoverResult) {
	peer := s.callerOf(ctx, req.Params.Meta)
	if peer == "" {
		return
	}
	result.Instructions = s.instructions(peer)
	result.Meta = cmp.Or(result.Meta, &mcp.Meta{})
	if result.Meta.AdditionalFields == nil {
		result.Meta.AdditionalFields = map[string]any{}
	}
	result.Meta.AdditionalFields[PeerMeta] = peer
}

// callerOf is the peer id a request comes from: a modern request's peer,
// else its session's.
func (s *Surface) callerOf(ctx context.Context, meta *mcp.Meta) string {
	if m, ok := s.modernOf(ctx, meta); ok {
		return s.Board.Sight(m)
	}
	if session := server.ClientSessionFromContext(ctx); session != nil {
		return s.Board.PeerID(session.SessionID())
	}
	return ""
}
