package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// serveInitialize opens a session, unless new sessions are refused: then the
// request is answered with a JSON-RPC error (HTTP 200, so that any client
// reads it) and mcp-go never sees it.
func (h *Server) serveInitialize(w http.ResponseWriter, r *http.Request, body []byte, id json.RawMessage) {
	if ref := h.cfg.Refusal(); ref != nil {
		h.log.Info("a new session was refused", zap.String("reason", ref.reason()), zap.String("url", ref.URL))
		writeFrame(w, http.StatusOK, ref.frame(id, wire.CodeLeaseLost))
		return
	}
	place, n := h.table.admit(h.cfg.MaxSessions)
	if place == nil {
		// said once while it stays full: whoever is refused tries again
		// as asked, every few seconds
		level := zap.DebugLevel
		if h.fullSaid.CompareAndSwap(false, true) {
			level = zap.InfoLevel
		}
		h.log.Log(level, "a new session was refused: the server is full", zap.Int("sessions", n))
		refuseFull(w, n)
		return
	}
	h.fullSaid.Store(false)
	defer place.release()
	rec := newBufferWriter()
	// Handled to the end whoever hangs up: mcp-go, finding the request's
	// context ended, would return before it registered or named the
	// session its initialize made (and put on the board), which nothing
	// would then end. Named, it is ended below.
	h.pass(rec, withBody(r, body).WithContext(context.WithoutCancel(r.Context())))
	sid := rec.header.Get(server.HeaderKeySessionID)
	switch {
	case sid == "":
	case initializeFailed(rec), r.Context().Err() != nil, rawio.HungUp(connOf(r)):
		// An initialize answered with an error, or whose client hung up
		// before its answer, opens no session: mcp-go's id for it is ended.
		// The connection itself is asked: net/http hears a hang-up only
		// once its reader runs, which a busy server runs after this.
		h.endSession(sid, endRefused)
		rec.header.Del(server.HeaderKeySessionID)
	default:
		h.table.markLive(sid, place)
	}
	rec.copyTo(w)
}

// initializeFailed reports whether an initialize's answer is not a
// successful result.
func initializeFailed(rec *bufferWriter) bool {
	if rec.status != http.StatusOK {
		return true
	}
	answer := rec.body
	if wire.IsEventStream(rec.header) {
		_ = wire.ReadEvents(bytes.NewReader(rec.body), func(data []byte) error {
			answer = bytes.Clone(data)
			return nil
		})
	}
	var a wire.Envelope
	return json.Unmarshal(answer, &a) != nil || len(a.Error) > 0 || len(a.Result) == 0
}

// serveDelete ends the session its client names.
func (h *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	sid, ok := h.session(w, r, "DELETE /mcp names the session to end in Mcp-Session-Id")
	if !ok {
		return
	}
	// Not under a request of the session being answered (a bridge that
	// gave up on a server only slow left a call in flight there, and the
	// next bridge ends that session before it opens its client's again):
	// it ends once they have, and gives up meanwhile what the session
	// opened next claims (Config.Leaving), so that neither waits.
	if h.table.whenIdle(sid, func() { h.endSession(sid, endDelete) }) {
		h.log.Debug("a DELETE ends its session once the requests of its being answered have ended", zap.String("session", sid))
		if h.cfg.Leaving != nil {
			h.cfg.Leaving(sid)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	defer h.table.expect(sid, endDelete)()
	h.pass(w, r)
}

// endSession ends a session the way a DELETE does (mcp-go terminates and
// unregisters it and drops its state), for the given reason.
func (h *Server) endSession(sid, reason string) {
	defer h.table.expect(sid, reason)()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodDelete, "/mcp", nil) // a valid method and path: no error
	req.Header.Set(server.HeaderKeySessionID, sid)
	h.mcp.ServeHTTP(newBufferWriter(), req)
}
