package stdio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// localSession is the in-process MCP session of the client on this
// process's stdio. It reports its transport as "stdio".
type localSession struct {
	*server.InProcessSession
	listen *listenFilter // what its 2026-07-28 client's listen asks to hear
	local  *Local        // what serves it, which knows whether its client initialized (a pointer: a session is a map key)
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
		session: localSession{InProcessSession: server.NewInProcessSession(sessionID, nil), listen: &listenFilter{}},
		out:     out,
	}
	l.session.local = l
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
			if done, ok := n.Params.AdditionalFields[flushed].(chan struct{}); ok && n.Method == flushed {
				close(done)
				continue
			}
			var heard []mcp.JSONRPCNotification
			if l.opened() {
				// Its session hears every broadcast, as a legacy one does, and
				// each of its listens what it asks for besides, tagged: bridged,
				// each is a session of its own.
				listened, _ := l.session.listened(n)
				heard = append([]mcp.JSONRPCNotification{n}, listened...)
			} else {
				heard = l.session.hears(n)
			}
			for _, heard := range heard {
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
	_, batch := wire.SplitBatch(msg)
	answers, _ := wire.GatherEach(msg, func(i int, m json.RawMessage) ([]byte, bool) {
		one := ctx
		if batch { // each call of a batch is kept as its own
			one = carry.Member(ctx, i)
		}
		return l.handleOne(one, m), true
	})
	return answers
}

func (l *Local) handleOne(ctx context.Context, msg json.RawMessage) []byte {
	if answer, screened := wire.Screen(msg); screened {
		return answer
	}
	env, err := wire.ReadEnvelope(msg)
	if answer, screened := wire.Unreadable(env, err); screened {
		return answer
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
	if refusal := wire.UnknownRevision(env, msg); refusal != nil {
		return refusal // as over HTTP, whether or not it names its capabilities
	}
	if env.Method == string(mcp.MethodInitialize) {
		l.initializing.RLock()
		defer l.initializing.RUnlock()
	}
	end, listen := l.track(ctx, env, msg)
	session := server.ClientSession(l.session)
	if listen {
		session = listening{l.session, string(env.ID)}
	}
	answer := l.answer(ctx, session, env, msg)
	if end != nil && end() {
		return nil // cancelled: answered nothing, as a bridge answers it
	}
	if listen {
		l.flush() // what the listen heard comes before its answer (its acknowledgement first), as over HTTP
	}
	return answer
}

// flushed is the method of a mark flush sends through the session's
// notifications, and the key of the channel the pump closes on reading it.
const flushed = "majordomus/flushed"

// flush returns once the pump has written every notification the server
// gave the session before it, or the session closed.
func (l *Local) flush() {
	done := make(chan struct{})
	mark := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: flushed, Params: mcp.NotificationParams{AdditionalFields: map[string]any{flushed: done}}}}
	select {
	case l.session.NotificationChannel() <- mark:
	case <-l.life.Done():
		return
	}
	select {
	case <-done:
	case <-l.life.Done():
	}
}

// Flush is flush, or returns when ctx ends: a host that stopped reading
// stdout holds the pump, and must not hold the caller too.
func (l *Local) Flush(ctx context.Context) {
	done := make(chan struct{})
	go func() { // it returns with the pump's write, or once Close is called
		defer close(done)
		l.flush()
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// track begins tracking a 2026-07-28 request, which its client may
// cancel, and records who it says its client is; it marks the one a
// notifications/cancelled names; nil when msg is not such a request.
// listen says it is a subscriptions/listen.
func (l *Local) track(ctx context.Context, env wire.Envelope, msg json.RawMessage) (end func() bool, listen bool) {
	if env.Method != string(mcp.MethodNotificationCancelled) && !wire.MayHold(msg, mcp.MetaKeyProtocolVersion) {
		return nil, false // not of that revision: decoded no further
	}
	params := wire.ParamsOf(msg)
	if env.Method == string(mcp.MethodNotificationCancelled) {
		l.modern.Cancel(params)
		return nil, false
	}
	if meta, version := wire.MetaOf(params); env.IsRequest() && mcp.IsModernProtocol(version) {
		l.record.named(ctx, meta)
		_, end := l.modern.Begin(context.Background(), env.ID) // its answer is dropped; it runs on
		return end, env.Method == string(mcp.MethodSubscriptionsListen)
	}
	return nil, false
}

// answer is the MCPServer's answer to msg on session (the client's, or as
// one of its listens sees it), recorded.
func (l *Local) answer(ctx context.Context, session server.ClientSession, env wire.Envelope, msg json.RawMessage) []byte {
	answer := l.srv.HandleMessage(l.srv.WithContext(ctx, session), msg)
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

// listenFilter is what the session's open 2026-07-28 listens ask to hear
// (mcp-go's SessionWithSubscriptionFilter), each under its own id: over
// HTTP each listen is a session of its own, and so hears alone.
type listenFilter struct {
	mu   sync.Mutex
	open []openListen
}

// openListen is one open listen: its id (its JSON), its filter, and the
// id as mcp-go reads it, which tags what it hears (5.0 as 5).
type openListen struct {
	id     string
	filter mcp.SubscriptionFilter
	tag    any
}

// set records the filter of the listen id; the zero filter, that it ended.
func (f *listenFilter) set(id string, filter mcp.SubscriptionFilter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open = slices.DeleteFunc(f.open, func(o openListen) bool { return o.id == id })
	if !filter.IsEmpty() {
		var tag any
		_ = json.Unmarshal([]byte(id), &tag)
		f.open = append(f.open, openListen{id, filter, tag})
	}
}

// listening is the session as its listen id sees it: the filter mcp-go
// sets on it is that listen's.
type listening struct {
	localSession
	id string
}

func (s listening) SetSubscriptionFilter(filter mcp.SubscriptionFilter) { s.listen.set(s.id, filter) }

// SetSubscriptionFilter records the filter of a listen without an id,
// which mcp-go refuses before it sets any.
func (s localSession) SetSubscriptionFilter(filter mcp.SubscriptionFilter) { s.listen.set("", filter) }

// SubscriptionFilter is what the open listens ask to hear together, and
// whether one is open; none for a client that initialized, whose session
// hears every broadcast.
func (s localSession) SubscriptionFilter() (mcp.SubscriptionFilter, bool) {
	if s.local.opened() {
		return mcp.SubscriptionFilter{}, false
	}
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	var all mcp.SubscriptionFilter
	for _, o := range s.listen.open {
		all.ToolsListChanged = all.ToolsListChanged || o.filter.ToolsListChanged
		all.PromptsListChanged = all.PromptsListChanged || o.filter.PromptsListChanged
		all.ResourcesListChanged = all.ResourcesListChanged || o.filter.ResourcesListChanged
		all.ResourceSubscriptions = append(all.ResourceSubscriptions, o.filter.ResourceSubscriptions...)
	}
	return all, len(s.listen.open) > 0
}

var _ server.SessionWithSubscriptionFilter = localSession{}
var _ server.SessionWithSubscriptionFilter = listening{}

// hears is what a client that never initialized (a 2026-07-28 one) hears
// of n. A broadcast list_changed it hears through each open listen whose
// filter names it, tagged with that listen's id in _meta, as mcp-go tags
// what a listen stream carries over HTTP. Anything else, resources/updated
// among it (tagged by whoever sent it for a listen), it hears as it is.
func (s localSession) hears(n mcp.JSONRPCNotification) []mcp.JSONRPCNotification {
	if heard, broadcast := s.listened(n); broadcast {
		return heard
	}
	return []mcp.JSONRPCNotification{n}
}

// listened is what the open listens hear of n, when it is a broadcast
// list_changed (broadcast): it once through each whose filter names it,
// tagged with its id.
func (s localSession) listened(n mcp.JSONRPCNotification) (heard []mcp.JSONRPCNotification, broadcast bool) {
	var asks func(mcp.SubscriptionFilter) bool
	switch mcp.MCPMethod(n.Method) {
	case mcp.MethodNotificationToolsListChanged:
		asks = func(f mcp.SubscriptionFilter) bool { return f.ToolsListChanged }
	case mcp.MethodNotificationPromptsListChanged:
		asks = func(f mcp.SubscriptionFilter) bool { return f.PromptsListChanged }
	case mcp.MethodNotificationResourcesListChanged:
		asks = func(f mcp.SubscriptionFilter) bool { return f.ResourcesListChanged }
	default:
		return nil, false
	}
	s.listen.mu.Lock()
	defer s.listen.mu.Unlock()
	for _, o := range s.listen.open {
		switch {
		case !asks(o.filter):
		case o.tag == nil:
			heard = append(heard, n)
		default:
			c := n
			c.Params.Meta = maps.Collect(maps.All(n.Params.Meta)) // a map even from nil
			c.Params.Meta[mcp.MetaKeySubscriptionID] = o.tag
			heard = append(heard, c)
		}
	}
	return heard, true
}
