package stdio

import (
	"encoding/json"
	"maps"
	"sync"

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
