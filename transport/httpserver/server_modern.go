package httpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// The two answers of /mcp that are not mcp-go's: a refusal by a server
// that lost its lease, and a request of revision 2026-07-28, which
// belongs to no session.

// serveModern serves a 2026-07-28 request, which belongs to no session:
// mcp-go serves it on one of its own for the request's life, checking the
// revision's headers. A server that lost its lease refuses it, in that
// revision's code range, before it runs, and a bridge's tool call after it
// ran too (passCall): a bridge then sends it to the current server. An
// open subscriptions/listen stream counts as a session. A bridge's
// presence is not refused: only one with a call still running here opens
// it again, and holds it until that call is answered.
func (h *Server) serveModern(w http.ResponseWriter, r *http.Request, body []byte, env wire.Envelope) {
	if ref := h.cfg.Refusal(); ref != nil && env.IsRequest() && !h.presence(env) {
		h.log.Info("a request was refused", zap.String("reason", ref.reason()), zap.String("method", heard(env.Method)), zap.String("url", ref.URL))
		writeFrame(w, http.StatusOK, ref.frame(env.ID, wire.CodeLeaseLostModern))
		return
	}
	if env.Method == string(mcp.MethodNotificationCancelled) && !env.IsRequest() {
		// Over HTTP, that revision cancels a request by closing its stream
		// (a bridge does so). A notification on no session cannot say whose
		// request it names: mcp-go keys every sessionless request by its id
		// alone, so it would cancel another client's call of the same id.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if refusal := wire.PromptRefusal(h.cfg.MCP, env, body); refusal != nil {
		writeFrame(w, http.StatusBadRequest, refusal) // that revision's status for -32602
		return
	}
	if r.Header.Get(wire.NamesInBody) != "" {
		var m struct{ Params json.RawMessage }
		_ = json.Unmarshal(body, &m)
		wire.NamesFromBody(r.Header, env.Method, m.Params)
	}
	if env.Method == string(mcp.MethodSubscriptionsListen) && env.IsRequest() {
		// Counted as a session, and so held to the cap, but for a bridge's
		// presence, which keeps its client on the board.
		var done, presence context.CancelFunc
		r, done = h.untilStopped(r) // Shutdown ends it, as it ends a session's stream
		defer done()
		if h.presence(env) {
			presence = done
		}
		end, n := h.table.listen(h.cfg.MaxSessions, presence)
		if end == nil {
			refuseFull(w, n)
			return
		}
		defer end()
		// Logged as sessions are: it is how a 2026-07-28 client stays.
		h.log.Info("listen stream opened")
		defer h.log.Info("listen stream closed")
		kw, stop := keepAlive(w, h.cfg.ListenKeepAlive)
		defer stop()
		w = kw
	} else if env.IsRequest() {
		defer h.table.modernCall()()
		// A newcomer's first such request holds nothing here: it counts as
		// coming until its presence opens.
		h.conns.notArrived(connOf(r))
		if carry.Names(r) { // a bridge's tool call: refused, too, once it ran here
			h.passCall(w, withBody(r, body), h.pass, func(ref *Refusal) {
				writeFrame(w, http.StatusOK, ref.frame(env.ID, wire.CodeLeaseLostModern))
			})
			return
		}
	}
	h.pass(w, withBody(r, body))
}

// presence reports whether env opens a bridge's presence (Config.PresenceID):
// a listen of that id, and nothing else that borrows it.
func (h *Server) presence(env wire.Envelope) bool {
	var id string
	return h.cfg.PresenceID != "" && env.Method == string(mcp.MethodSubscriptionsListen) &&
		json.Unmarshal(env.ID, &id) == nil && id == h.cfg.PresenceID
}

func (ref *Refusal) reason() string { return cmp.Or(ref.Reason, wire.ErrCodeLeaseLost) }

// frame is the JSON-RPC error, with code, that answers a refused initialize
// or 2026-07-28 request.
func (ref *Refusal) frame(id json.RawMessage, code int) []byte {
	where, url := "where the checkout's current server is, is not known", (*string)(nil)
	if ref.URL != "" {
		where, url = "the checkout's current server is at "+ref.URL, &ref.URL
	}
	return wire.DataErrorFrame(id, code, fmt.Sprintf("%s: %s; %s", ref.reason(), ref.Message, where), struct {
		Reason string  `json:"reason"`
		URL    *string `json:"url"`
	}{ref.reason(), url})
}

// modernMeta reports whether a message claims a sessionless protocol
// version in its _meta, read exactly as mcp-go reads it to choose how to
// serve it: a message this server took for sessionless and mcp-go did not
// (a "_META" beside "_meta", say) would get a session past the table.
func modernMeta(msg json.RawMessage) bool {
	var m struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	return json.Unmarshal(msg, &m) == nil && mcp.IsModernProtocol(m.Params.Meta.ProtocolVersion())
}
