package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// serveMCP decides every /mcp request before mcp-go sees it: what it
// refuses never reaches mcp-go, so a refused initialize opens no session.
func (h *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodPost, http.MethodDelete:
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		refuseUnread(w, r, http.StatusMethodNotAllowed, errCodeMethodNotAllowed, r.Method+
			" /mcp is not served: POST a JSON-RPC message, GET the session's stream, DELETE to end the session")
		return
	}
	if !h.authorized(r) {
		// Nothing is learned here: not whether a session exists, not what
		// the server serves (docs/security.md).
		w.Header().Set("WWW-Authenticate", secret.Scheme+` realm="majordomus"`)
		refuseUnread(w, r, http.StatusUnauthorized, errCodeUnauthorized,
			"this server serves only the user who owns its lease: send the header `majordomus-mcp status` shows")
		return
	}
	if err := h.originAllowed(r); err != nil {
		h.refused.Warn("a request from another origin was refused", zap.Error(err))
		refuseUnread(w, r, http.StatusForbidden, errCodeForbidden, "a request from another origin was refused: "+err.Error())
		return
	}
	if h.closing.Load() {
		refuseUnread(w, r, http.StatusServiceUnavailable, errCodeUnavailable, "the server is shutting down")
		return
	}
	if h.cfg.Refusal() != nil {
		w.Header().Set(wire.LeaseHeader, "lost") // its bridges move to the current server
	}
	if r.Method != http.MethodPost && mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		h.pass(w, r) // 2026-07-28 has no GET stream nor DELETE: mcp-go answers 405
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet:
		h.serveStream(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	}
}

// refuseUnread answers a request refused before its body was read, and
// closes its connection: what is left of the body is never waited for (a
// body trickled in by a client with no token would hold it otherwise).
func refuseUnread(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		// net/http would otherwise read what is left before closing
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	writeError(w, status, code, message)
}

// session checks the request's session id, answering when it is missing
// or unknown.
func (h *Server) session(w http.ResponseWriter, r *http.Request, missing string) (string, bool) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		writeError(w, http.StatusBadRequest, errCodeSessionRequired, missing)
		return "", false
	}
	if !h.table.known(sid) {
		writeError(w, http.StatusNotFound, errCodeSessionNotFound,
			"unknown or expired Mcp-Session-Id; send initialize again to open a new session")
		return "", false
	}
	return sid, true
}

// pass hands a request to mcp-go, with its plain-text errors made JSON.
func (h *Server) pass(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(*endsAtMark); !ok {
		// a POST in flight takes its session's notifications too, the
		// stream's end mark among them: it is never its client's
		w = &endsAtMark{ResponseWriter: w}
	}
	jw := &jsonErrors{ResponseWriter: w}
	h.mcp.ServeHTTP(jw, r)
	jw.finish()
}

// serveStream serves a session's GET stream. The stream ends with its
// session; the last stream of a session whose client's connection dropped
// ends its session at once (once the requests of its being answered have
// ended), so a client killed without a goodbye is not counted until the
// idle timeout.
func (h *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	sid, ok := h.session(w, r, "GET /mcp opens a session's stream: name the session in Mcp-Session-Id")
	if !ok {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	remove, ok := h.table.addStream(sid, cancel)
	if !ok {
		writeError(w, http.StatusNotFound, errCodeSessionNotFound, "the session ended")
		return
	}
	h.pass(&endsAtMark{ResponseWriter: w, end: cancel}, r.WithContext(ctx))
	if left := remove(); left == 0 && r.Context().Err() != nil && !h.closing.Load() && h.table.known(sid) {
		h.table.afterRequests(sid, func() {
			if !h.table.streaming(sid) && h.table.known(sid) { // no stream opened again meanwhile
				h.endSession(sid, endStreamDropped)
			}
		})
	}
}

// streamEndMethod is the method of the mark EndStreams sends a session
// through its notifications, after what it was told.
const streamEndMethod = "majordomus/stream-end"

// streamEndEvent is how mcp-go writes the mark on a GET stream.
var streamEndEvent = []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"" + streamEndMethod + "\"")

// endsAtMark is every writer mcp-go is handed (pass, serveBatch): the mark
// EndStreams sent is never written, and on a GET stream (end set) it ends
// the stream; mcp-go writes each event in one Write.
type endsAtMark struct {
	http.ResponseWriter
	end context.CancelFunc
}

func (e *endsAtMark) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, streamEndEvent) {
		if e.end != nil {
			e.end()
		}
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

func (e *endsAtMark) Flush() { _ = http.NewResponseController(e.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection's writer.
func (e *endsAtMark) Unwrap() http.ResponseWriter { return e.ResponseWriter }

func (h *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	if !json.Valid(body) {
		writeError(w, http.StatusBadRequest, errCodeInvalidJSON, "the body is not JSON")
		return
	}
	if !wire.IsJSON(r.Header) {
		writeError(w, http.StatusUnsupportedMediaType, errCodeUnsupportedMedia, "POST /mcp takes Content-Type: application/json")
		return
	}
	members, batch := wire.SplitBatch(body)
	env, err := wire.ReadEnvelope(body) // a single message's
	switch {
	case batch && len(members) == 0:
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "the batch is empty")
		return
	case errors.Is(err, wire.ErrNotAnObject) && !batch:
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "every message must be a JSON-RPC object")
		return
	}
	modern, initialize := mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)), false
	for _, m := range wire.Members(body) {
		e, _ := wire.ReadEnvelope(m)
		modern = modern || modernMeta(m)
		initialize = initialize || e.Method == string(mcp.MethodInitialize)
	}
	if v := r.Header.Get(mcp.HeaderProtocolVersion); v != "" && !modern && !initialize && !mcp.IsValidProtocolVersion(v) {
		// before the message is read, as mcp-go refuses one it reads
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "Unsupported protocol version: "+v)
		return
	}
	if !batch {
		refusal, screened := wire.Screen(body)
		if !screened {
			refusal, screened = wire.Unreadable(env, err)
		}
		switch {
		case screened && refusal == nil:
			w.WriteHeader(http.StatusAccepted) // a notification answered nothing
			return
		case screened:
			status := http.StatusOK
			if modern {
				status = http.StatusBadRequest // that revision's status for -32600 and -32602
			}
			writeFrame(w, status, refusal)
			return
		}
	}
	switch {
	case modern && batch:
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "2026-07-28 has no batches: send each message alone")
		return
	case modern:
		h.serveModern(w, r, body, env)
		return
	case initialize && batch:
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "initialize must be sent alone, not in a batch")
		return
	case initialize && (!env.IsRequest() || len(env.Result) > 0 && string(env.Result) != "null"):
		// a notification, or an answer (mcp-go reads one with a result as
		// such), accepted with nothing as mcp-go accepts it, before mcp-go
		// draws it a session id nobody would hear of or end
		w.WriteHeader(http.StatusAccepted)
		return
	case initialize:
		h.serveInitialize(w, r, body, env.ID)
		return
	}
	sid, ok := h.session(w, r, "the Mcp-Session-Id header is required on every request after initialize")
	if !ok {
		return
	}
	end := h.table.begin(sid)
	switch {
	case end == nil && h.closing.Load():
		writeError(w, http.StatusServiceUnavailable, errCodeUnavailable, "the server is shutting down")
		return
	case end == nil: // idled out as it came: what a bridge opens again
		writeError(w, http.StatusNotFound, errCodeSessionNotFound, "the session ended")
		return
	}
	defer end()
	if batch {
		if carry.Names(r) { // a bridge's batch holding a tool call: as a tool call
			h.passCall(w, r, func(w http.ResponseWriter, r *http.Request) { h.serveBatch(w, r, body) }, func(ref *Refusal) {
				writeError(w, http.StatusConflict, wire.ErrCodeLeaseLost, ref.Message)
			})
			return
		}
		h.serveBatch(w, r, body)
		return
	}
	if env.Method == string(mcp.MethodPing) && h.answeredPing(w, r, sid, env, body) {
		return
	}
	if refusal := wire.PromptRefusal(h.cfg.MCP, env, body); refusal != nil {
		writeFrame(w, http.StatusOK, refusal)
		return
	}
	if carry.Names(r) {
		h.passCall(w, withBody(r, body), h.pass, func(ref *Refusal) {
			writeError(w, http.StatusConflict, wire.ErrCodeLeaseLost, ref.Message)
		})
		return
	}
	h.pass(w, withBody(r, body))
}

// passCall serves a bridge's tool call where the checkout's history keeps
// it: on a server whose lease was lost (one continued after a freeze, say)
// it is refused (409 lease_lost), and the bridge sends it to the current
// server. Its answer is held until the lease has been read again after
// the call ran, for a server frozen as it ran it recorded it where that
// history never shows it; what the call ran here only this server, whose
// state is no longer the checkout's, saw. Other sessions are served on
// (R6). What the call's stream carried meanwhile (the session's
// notifications) comes with its answer, or goes with it when it is
// refused: the bridge that moves then tells its client what may have
// changed. serve serves it (a batch is served member by member); refuse
// writes the refusal in the call's revision.
func (h *Server) passCall(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request), refuse func(*Refusal)) {
	ref := h.cfg.Refusal()
	if ref == nil {
		held := newBufferWriter()
		serve(held, r)
		if ref = h.cfg.Refusal(); ref == nil {
			held.copyTo(w)
			return
		}
	}
	h.log.Info("a bridge's call was refused", zap.String("reason", ref.reason()), zap.String("url", ref.URL))
	refuse(ref)
}

// answeredPing answers the ping of a session with a stream open as mcp-go
// would (its answer, byte for byte, in JSON), and reports whether it did:
// such a ping asks only whether the session lives, which the table has
// just told, and what the server has to send the session goes to its
// stream. Through mcp-go it cost a goroutine and a decode, and so every
// idle bridge's heartbeat woke its leaseholder's threads a dozen more times
// (issue 33's idle cost, B11). Any other ping is left to mcp-go: one
// without an id mcp-go reads, under a protocol version it does not know,
// or of a session whose answers may carry what the server queued for it,
// one mcp-go would refuse (its params not a ping's), and one carrying a
// result, which mcp-go takes for its client's answer and answers nothing.
// The id is read as mcp-go reads it (a number as a float64: -0 stays -0).
func (h *Server) answeredPing(w http.ResponseWriter, r *http.Request, sid string, env wire.Envelope, body []byte) bool {
	var id any
	var ping mcp.PingRequest
	v := r.Header.Get(mcp.HeaderProtocolVersion)
	result := len(env.Result) > 0 && string(env.Result) != "null" // as mcp-go reads it: an answer
	if !env.IsRequest() || result || (v != "" && !mcp.IsValidProtocolVersion(v)) || !h.table.streaming(sid) ||
		json.Unmarshal(env.ID, &id) != nil || json.Unmarshal(body, &ping) != nil {
		return false
	}
	answer, _ := json.Marshal(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), mcp.EmptyResult{}))
	if h.cfg.Heard != nil {
		h.cfg.Heard(sid)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(answer, '\n'))
	return true
}

// readBody reads a POST's body, within BodyTimeout and MaxBody, or
// answers why it cannot. One too large is read on (within bounds) before
// the 413, since a client still sending when the connection closes would
// get a reset instead of the answer.
func (h *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.cfg.BodyTimeout)) // a body trickled in holds nothing for long
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBody))
	switch {
	case errors.As(err, new(*http.MaxBytesError)):
		_ = rc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64*h.cfg.MaxBody))
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestEntityTooLarge, errCodeTooLarge, fmt.Sprintf("the body is over %d bytes", h.cfg.MaxBody))
		return nil, false
	case err != nil:
		// The deadline stays: what is left of the body is not waited for,
		// and the connection closes with the answer.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "reading the body: "+err.Error())
		return nil, false
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, true
}

// writeFrame answers with one JSON-RPC frame (or batch of them) of the
// server's own.
func writeFrame(w http.ResponseWriter, status int, frame []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(frame, '\n'))
}

// withBody is r carrying body.
func withBody(r *http.Request, body []byte) *http.Request {
	sub := r.Clone(r.Context())
	sub.Body = io.NopCloser(bytes.NewReader(body))
	sub.ContentLength = int64(len(body))
	return sub
}
