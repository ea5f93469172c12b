package carry

import (
	"encoding/json"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// What a client asked to hear goes with its session
// (docs/design.md#nothing-is-lost: no notification is lost): the resources
// it subscribed to and the logging level it set are carried, like its
// initialize and announcement, onto whatever serves it next, so that a
// change made after a take-over reaches it as it would have before. Both
// sides record it from the messages they answer: the bridge from what it
// relays, a local session from what it serves.

// subscribeID and logLevelID are the ids of a carried session's replayed
// subscriptions and logging level.
const (
	subscribeID = "majordomus-bridge-subscribe"
	logLevelID  = "majordomus-bridge-log-level"
)

// What a session carries of its subscriptions is bounded, as everything a
// client sends is (docs/security.md, "Bounded"), above what a client of an
// index of 10,000 objects asks (B7): a subscription past the bounds is
// answered, and not carried.
const (
	maxHeard      = 1 << 14 // subscriptions
	maxHeardBytes = 16 << 20
)

// uriBytes is what the URIs subscribed to take.
func (h *Hearing) uriBytes() int {
	n := 0
	for _, u := range h.Subscribed {
		n += len(u)
	}
	return n
}

// Hearing is what a session asked to hear.
type Hearing struct {
	Subscribed []string // the URIs of resources/subscribe, in order, without repeats
	LogLevel   string   // the level of logging/setLevel; "" when never set
}

// NoteHeard records what one answered message says of what the client
// asks to hear: a subscription, an unsubscription, a logging level. It
// decodes the params of those three methods only.
func (h *Hearing) NoteHeard(method string, params json.RawMessage) {
	switch method {
	case string(mcp.MethodResourcesSubscribe), string(mcp.MethodResourcesUnsubscribe):
		var p struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(params, &p) != nil || p.URI == "" {
			return
		}
		h.Subscribed = slices.DeleteFunc(h.Subscribed, func(u string) bool { return u == p.URI })
		if method == string(mcp.MethodResourcesSubscribe) && len(h.Subscribed) < maxHeard && h.uriBytes()+len(p.URI) <= maxHeardBytes {
			h.Subscribed = append(h.Subscribed, p.URI)
		}
	case string(mcp.MethodSetLogLevel):
		var p struct {
			Level string `json:"level"`
		}
		if json.Unmarshal(params, &p) == nil && p.Level != "" {
			h.LogLevel = p.Level
		}
	}
}

// HeardMethod says whether method is one noteHeard records.
func HeardMethod(method string) bool {
	switch method {
	case string(mcp.MethodResourcesSubscribe), string(mcp.MethodResourcesUnsubscribe), string(mcp.MethodSetLogLevel):
		return true
	}
	return false
}

// ReplayFrames are the requests that make a server's session hear what
// this one asked to: the logging level first, then each subscription.
func (h Hearing) ReplayFrames() [][]byte {
	var frames [][]byte
	if h.LogLevel != "" {
		params, _ := json.Marshal(map[string]string{"level": h.LogLevel})
		frames = append(frames, wire.RequestFrame(logLevelID, string(mcp.MethodSetLogLevel), params))
	}
	for _, uri := range h.Subscribed {
		params, _ := json.Marshal(map[string]string{"uri": uri})
		frames = append(frames, wire.RequestFrame(subscribeID, string(mcp.MethodResourcesSubscribe), params))
	}
	return frames
}

// Clone is a copy that shares nothing with h.
func (h Hearing) Clone() Hearing {
	return Hearing{Subscribed: slices.Clone(h.Subscribed), LogLevel: h.LogLevel}
}
