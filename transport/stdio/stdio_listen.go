package stdio

import (
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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

// tagged is n as an open listen hears it: tagged with the listen's id in
// _meta, as mcp-go tags what a listen stream carries over HTTP.
func (s localSession) tagged(n mcp.JSONRPCNotification) mcp.JSONRPCNotification {
	s.listen.mu.Lock()
	active, id := s.listen.active, s.listen.id
	s.listen.mu.Unlock()
	if !active || len(id) == 0 {
		return n
	}
	meta := map[string]any{}
	for k, v := range n.Params.Meta {
		meta[k] = v
	}
	meta[mcp.MetaKeySubscriptionID] = id
	n.Params.Meta = meta
	return n
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
// one) hears n, and how: tagged when its listen carries it.
func (s localSession) hears(n mcp.JSONRPCNotification) (mcp.JSONRPCNotification, bool) {
	switch mcp.MCPMethod(n.Method) {
	case mcp.MethodNotificationToolsListChanged, mcp.MethodNotificationPromptsListChanged,
		mcp.MethodNotificationResourcesListChanged, mcp.MethodNotificationResourceUpdated:
		if !s.asked(n.Method) {
			return n, false
		}
		return s.tagged(n), true
	}
	return n, true
}

// asked reports whether a client that never initialized (a 2026-07-28
// one) asked to hear the broadcast method: only through an open listen
// whose filter names it. Anything else goes to every client.
func (s localSession) asked(method string) bool {
	filter, active := s.SubscriptionFilter()
	switch mcp.MCPMethod(method) {
	case mcp.MethodNotificationToolsListChanged:
		return active && filter.ToolsListChanged
	case mcp.MethodNotificationPromptsListChanged:
		return active && filter.PromptsListChanged
	case mcp.MethodNotificationResourcesListChanged:
		return active && filter.ResourcesListChanged
	}
	return true
}

// modernCalls are a local session's 2026-07-28 requests being answered,
// by id: one the client cancels is answered nothing.
type modernCalls struct{ m sync.Map }

// begin records a modern request; end reports whether it was cancelled.
func (c *modernCalls) begin(id json.RawMessage) (end func() (cancelled bool)) {
	flag := new(atomic.Bool)
	key := string(id)
	c.m.Store(key, flag)
	return func() bool {
		c.m.CompareAndDelete(key, flag)
		return flag.Load()
	}
}

// cancel marks the request a notifications/cancelled names.
func (c *modernCalls) cancel(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	if flag, ok := c.m.Load(string(p.RequestID)); ok {
		flag.(*atomic.Bool).Store(true)
	}
}
