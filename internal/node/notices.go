package node

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
)

// What a client is told when what serves it changes, beyond the log: these
// touch none of the session's state, only the client's output.

// relisted tells a client whose session c moved to another server that
// the layer's lists, and the resources it subscribed to, may have changed:
// what changed while it moved was announced on neither server's session
// of it. A 2026-07-28 client is told on each listen under way, of what
// that listen asked to hear; one that initialized too, on its session
// besides, as it hears a change in every mode.
func (s *clientSession) relisted(c *carry.Session) {
	if s.n.out == nil {
		return
	}
	if len(c.Initialize) != 0 {
		s.tellChanged(nil, mcp.SubscriptionFilter{ResourcesListChanged: true, PromptsListChanged: true, ResourceSubscriptions: c.Heard.Subscribed})
	}
	for _, msg := range s.listensUnderWay() {
		var listen struct {
			ID     any                           `json:"id"`
			Params mcp.SubscriptionsListenParams `json:"params"`
		}
		if json.Unmarshal(msg, &listen) == nil && listen.ID != nil {
			s.tellChanged(map[string]any{mcp.MetaKeySubscriptionID: listen.ID}, listen.Params.Notifications)
		}
	}
}

// tellChanged writes the notifications of a change that f asks to hear,
// with meta (a listen's tag).
func (s *clientSession) tellChanged(meta map[string]any, f mcp.SubscriptionFilter) {
	var notes []any
	defer func() { s.send(notes...) }()
	note := func(m mcp.MCPMethod, fields map[string]any) {
		notes = append(notes, mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
			Method: string(m), Params: mcp.NotificationParams{Meta: meta, AdditionalFields: fields}}})
	}
	if f.ResourcesListChanged {
		note(mcp.MethodNotificationResourcesListChanged, nil)
	}
	if f.PromptsListChanged {
		note(mcp.MethodNotificationPromptsListChanged, nil)
	}
	for _, uri := range f.ResourceSubscriptions {
		note(mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri})
	}
}

// joined tells a client that was served alone that it shares now, at
// warning as the notice that it was served alone was, so that whoever
// heard that hears this: in the log, and on srv, this process's, or in a
// notifications/message to a legacy client whose session c carried (a
// 2026-07-28 one is sent only what its listen asked for). Its peer id on
// the shared board, now, differs from the one it had, was, when that board
// had given was to another client already, or was was numbered here alone
// (surface.Board.Counted).
func (s *clientSession) joined(h how, c *carry.Session, was, now string, srv *served) {
	runs := ""
	if h.as == machine.Leaseholder {
		runs = ", which this process runs"
	}
	msg := "majordomus: this session now uses the checkout's shared server at " + h.url + runs + ": one board and one history with the other agents here"
	if was != "" && now != "" && was != now {
		msg += fmt.Sprintf("; it is peer %s there, not %s", now, was)
	}
	if srv != nil {
		tell(srv, msg)
	} else {
		s.warn(c, msg)
	}
	s.n.log.Info("joined the checkout's shared server; this client is no longer served alone", // once it is told
		zap.String("url", h.url), zap.String("peer", now), zap.String("peer_before", was))
}

// moved tells a legacy client whose session c its bridge carried to
// another shared server (its own stopped serving: a failover) where it is
// served now, as a take-over's is told.
func (s *clientSession) moved(h how, c *carry.Session) {
	s.warn(c, "majordomus: the shared server this session used no longer serves the checkout; it goes on with the checkout's shared server at "+h.url)
}

// warn sends msg at warning to a legacy client whose session c carried,
// in a notifications/message as mcp-go writes one, unless the client set
// its logging level above warning (a 2026-07-28 client is sent only what
// its listen asked for).
func (s *clientSession) warn(c *carry.Session, msg string) {
	if c == nil || len(c.Initialize) == 0 || s.n.out == nil {
		return
	}
	if c.Heard.LogLevel != "" && !mcp.LoggingLevelWarning.ShouldSendTo(mcp.LoggingLevel(c.Heard.LogLevel)) {
		return
	}
	s.send(mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
		Method: string(mcp.MethodNotificationMessage),
		Params: mcp.NotificationParams{AdditionalFields: map[string]any{"level": mcp.LoggingLevelWarning, "logger": "majordomus", "data": msg}},
	}})
}

// send writes notes to the client, in order and after those sent before,
// on a goroutine of their own: they are told under the session's mutex
// (adopt), and a host that stopped reading its stdout must hold neither
// that mutex nor the machine, whose hand-over and stop wait for it (as
// stdio.Local.Close waits for no notification being written).
func (s *clientSession) send(notes ...any) {
	if len(notes) == 0 {
		return
	}
	written := make(chan struct{})
	before := s.notices.last.Swap(&written)
	go func() {
		defer close(written)
		if before != nil {
			<-*before
		}
		for _, note := range notes {
			_ = s.n.out.WriteValue(note)
		}
	}()
}

// notices are the client's notices being written (send): last is closed
// once those sent last are.
type notices struct{ last atomic.Pointer[chan struct{}] }

// tell sends msg to this process's own client, served in process on srv:
// what changed for it is not news to the other sessions there, whose
// processes tell their own clients.
func tell(srv *served, msg string) {
	_ = srv.surface.MCP.SendLogMessageToSpecificClient(localSession, mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, "majordomus", msg))
}
