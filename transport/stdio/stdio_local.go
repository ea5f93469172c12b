package stdio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// localSession is the in-process MCP session of the client on this
// process's stdio. It reports its transport as "stdio".
type localSession struct {
	*server.InProcessSession
	listen *listenFilter // what its 2026-07-28 client's listen asks to hear
}

// Transport names how the session's client is connected.
func (localSession) Transport() string { return "stdio" }

// Local serves the stdio client in process, on the same MCPServer that
// serves HTTP sessions, so its answers are those of any other session.
type Local struct {
	srv          *server.MCPServer
	session      localSession
	out          *wire.FrameWriter
	life         context.Context // ends on Close
	end          context.CancelFunc
	record       sessionRecord
	modern       wire.Cancels // its 2026-07-28 requests being answered
	initializing sync.RWMutex // read-held while an initialize is answered: Carried waits for it
}

// NewLocal registers a new in-process session with srv and starts relaying
// the session's notifications to out. The session ends with ctx, or on
// Close.
func NewLocal(ctx context.Context, srv *server.MCPServer, out *wire.FrameWriter, sessionID string) (*Local, error) {
	l := &Local{
		srv:     srv,
		session: localSession{server.NewInProcessSession(sessionID, nil), &listenFilter{}},
		out:     out,
	}
	l.life, l.end = context.WithCancel(context.Background())
	if err := srv.RegisterSession(ctx, l.session); err != nil {
		return nil, fmt.Errorf("registering the stdio session: %w", err)
	}
	go l.pump(ctx)
	return l, nil
}

// pump relays server-to-client notifications until Close, or the end of
// ctx, which closes the session. It unregisters nothing once closed: a
// pump that was writing to a stdout nobody read may end long after, when
// another Local of this id is registered.
func (l *Local) pump(ctx context.Context) {
	notes := l.session.ClientNotifications()
	for {
		select {
		case <-l.life.Done():
			return
		case <-ctx.Done():
			l.Close()
			return
		case n := <-notes:
			if l.life.Err() != nil {
				return // closed while it waited: its notifications are over
			}
			if l.opened() {
				_ = l.out.WriteValue(n)
			} else if heard, ok := l.session.hears(n); ok {
				_ = l.out.WriteValue(heard)
			}
		}
	}
}

// ErrMoved says Close ended a 2026-07-28 listen under way: the client was
// handed on, and its listen goes on with whatever serves it next.
var ErrMoved = errors.New("stdio: the listen's session was handed on")

// Relay is Handle, but a listen Close ends is not answered: it reports
// ErrMoved.
func (l *Local) Relay(ctx context.Context, msg json.RawMessage) ([]byte, error) {
	if !wire.IsMethod(msg, mcp.MethodSubscriptionsListen) {
		return l.Handle(ctx, msg), nil
	}
	listen, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(l.life, stop)()
	answer := l.Handle(listen, msg)
	if l.life.Err() != nil && ctx.Err() == nil {
		return nil, ErrMoved
	}
	return answer, nil
}

// Handle answers one message or batch through the MCPServer.
func (l *Local) Handle(ctx context.Context, msg json.RawMessage) []byte {
	if refusal := wire.RefusedBatch(msg); refusal != nil {
		return refusal
	}
	var answers [][]byte
	for _, m := range wire.Members(msg) {
		if a := l.handleOne(ctx, m); a != nil {
			answers = append(answers, a)
		}
	}
	return wire.Gather(msg, answers)
}

func (l *Local) handleOne(ctx context.Context, msg json.RawMessage) []byte {
	if refusal := wire.Screen(msg); refusal != nil {
		return refusal
	}
	env, err := wire.ReadEnvelope(msg)
	if err != nil {
		return wire.ErrorFrame(nil, mcp.INVALID_REQUEST, "invalid request: a message must be a JSON object")
	}
	if env.Method == "" && len(env.ID) > 0 {
		return nil // the client's answer to a request: answered nothing, as over HTTP
	}
	if !l.opened() {
		if answer, ok := wire.Unopened(msg); ok {
			return answer
		}
	}
	if refusal := wire.PromptRefusal(l.srv, env, msg); refusal != nil {
		return refusal
	}
	if env.Method == string(mcp.MethodInitialize) {
		l.initializing.RLock()
		defer l.initializing.RUnlock()
	}
	end := l.track(env, msg)
	answer := l.answer(ctx, env, msg)
	if end != nil && end() {
		return nil // cancelled: answered nothing, as a bridge answers it
	}
	return answer
}

// track begins tracking a 2026-07-28 request, which its client may
// cancel, and marks the one a notifications/cancelled names; nil when msg
// is not such a request.
func (l *Local) track(env wire.Envelope, msg json.RawMessage) (end func() bool) {
	if env.Method != string(mcp.MethodNotificationCancelled) && !bytes.Contains(msg, []byte(mcp.MetaKeyProtocolVersion)) {
		return nil // not of that revision: decoded no further
	}
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(msg, &m)
	if env.Method == string(mcp.MethodNotificationCancelled) {
		l.modern.Cancel(m.Params)
		return nil
	}
	if _, version := wire.MetaOf(m.Params); env.IsRequest() && mcp.IsModernProtocol(version) {
		if env.Method == string(mcp.MethodSubscriptionsListen) {
			l.session.opening(env.ID)
		}
		_, end := l.modern.Begin(context.Background(), env.ID) // its answer is dropped; it runs on
		return end
	}
	return nil
}

// answer is the MCPServer's answer to msg, recorded.
func (l *Local) answer(ctx context.Context, env wire.Envelope, msg json.RawMessage) []byte {
	answer := l.srv.HandleMessage(l.srv.WithContext(ctx, l.session), msg)
	if answer == nil {
		return nil
	}
	b, err := json.Marshal(answer)
	if err != nil {
		return wire.ErrorFrame(env.ID, mcp.INTERNAL_ERROR, "internal error: "+err.Error())
	}
	l.record.note(ctx, env.Method, msg, b)
	return b
}

// opened reports whether the client's initialize succeeded.
func (l *Local) opened() bool {
	l.record.mu.Lock()
	defer l.record.mu.Unlock()
	return l.record.carried.Initialize != nil
}

// Closed is closed once Close was called.
func (l *Local) Closed() <-chan struct{} { return l.life.Done() }

// Close ends the session (it is unregistered) and stops relaying its
// notifications, if its ctx did not end it already. A notification being
// written as it is called is the last, and is not waited for: a host that
// stopped reading stdout would otherwise hold Close, and with it the
// process's stop and its hand-over, for good.
func (l *Local) Close() {
	l.end()
	l.srv.UnregisterSession(context.Background(), l.session.SessionID())
}

var _ server.SessionWithLogging = localSession{}
var _ server.SessionWithClientInfo = localSession{}

// listenFilter is what the session's open subscriptions/listen asks to
// hear (mcp-go's SessionWithSubscriptionFilter).
type listenFilter struct {
	mu     sync.Mutex
	filter mcp.SubscriptionFilter
	active bool
	id     json.RawMessage // the id of the listen, which tags what it hears
}

// opening records the id of a listen being opened.
func (s localSession) opening(id json.RawMessage) {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	s.listen.id = id
}

// SetSubscriptionFilter records the filter of the open listen; the zero
// filter, that it ended.
func (s localSession) SetSubscriptionFilter(filter mcp.SubscriptionFilter) {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	s.listen.filter, s.listen.active = filter, !filter.IsEmpty()
}

// SubscriptionFilter is the filter of the open listen, and whether one is.
func (s localSession) SubscriptionFilter() (mcp.SubscriptionFilter, bool) {
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	return s.listen.filter, s.listen.active
}

var _ server.SessionWithSubscriptionFilter = localSession{}

// hears reports whether a client that never initialized (a 2026-07-28
// one) hears n, and how. A broadcast list_changed it hears only through
// an open listen whose filter names it; what such a listen carries is
// tagged with the listen's id in _meta, as mcp-go tags what a listen
// stream carries over HTTP. Anything else goes to every client.
func (s localSession) hears(n mcp.JSONRPCNotification) (mcp.JSONRPCNotification, bool) {
	s.listen.mu.Lock()
	filter, active, id := s.listen.filter, s.listen.active, s.listen.id
	s.listen.mu.Unlock()
	asked := true
	switch mcp.MCPMethod(n.Method) {
	case mcp.MethodNotificationToolsListChanged:
		asked = active && filter.ToolsListChanged
	case mcp.MethodNotificationPromptsListChanged:
		asked = active && filter.PromptsListChanged
	case mcp.MethodNotificationResourcesListChanged:
		asked = active && filter.ResourcesListChanged
	case mcp.MethodNotificationResourceUpdated:
	default:
		return n, true
	}
	if !asked || !active || len(id) == 0 {
		return n, asked
	}
	meta := map[string]any{}
	maps.Copy(meta, n.Params.Meta)
	meta[mcp.MetaKeySubscriptionID] = id
	n.Params.Meta = meta
	return n, true
}
