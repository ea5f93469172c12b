package surface

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
)

// A client served alone (docs/design.md#the-layer) believes, unless told,
// that its agents share a board. It is told three ways, each with the
// reason: in its initialize instructions, by a notifications/message at
// warning once it has said notifications/initialized (hosts show those to
// their users; earlier, some drop them), and in majordomus_server's
// findings. The reason names files and OS errors, so it is quoted as data:
// one bounded line.

// maxReason bounds how many characters of a reason prose quotes.
const maxReason = 240

// AloneNotice says that a session is served alone, and why.
func AloneNotice(reason string) string {
	return "this session is served alone, without the checkout's shared server, because sharing failed: " +
		quoteWithin(reason, maxReason) + "; other agents in this checkout do not share its board, history or announcements"
}

// clientInitialized tells a client served alone so, once it is initialized.
// A session carried onto this process after a failover is told by what
// carries it, once the level its client set is replayed too: that comes
// after its notifications/initialized.
func (s *Surface) clientInitialized(ctx context.Context, _ mcp.JSONRPCNotification) {
	session := server.ClientSessionFromContext(ctx)
	reason := s.cfg.Process().Alone
	if session == nil || reason == "" || s.carrying(ctx) {
		return
	}
	message := mcp.NewLoggingMessageNotification(mcp.LoggingLevelWarning, Name, "majordomus: "+AloneNotice(reason))
	if err := s.MCP.SendLogMessageToSpecificClient(session.SessionID(), message); err != nil {
		s.log.Debug("the served-alone notice was not sent", zap.String("session", session.SessionID()), zap.Error(err))
	}
}
