package httpserver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Codes of the JSON error bodies the HTTP server answers with, besides
// those the bridge reads too (package wire).
const (
	errCodeUnauthorized     = "unauthorized"
	errCodeForbidden        = "forbidden"
	errCodeTooLarge         = "too_large"
	errCodeInvalidJSON      = "invalid_json"
	errCodeInvalidRequest   = "invalid_request"
	errCodeSessionRequired  = "session_required"
	errCodeSessionNotFound  = "session_not_found"
	errCodeMethodNotAllowed = "method_not_allowed"
	errCodeNotFound         = "not_found"
	errCodeUnsupportedMedia = "unsupported_media_type"
	errCodeUnavailable      = "unavailable"
	errCodeInternal         = "internal"
)

// writeError answers with status and a JSON error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	var body wire.HTTPError
	body.Error.Code, body.Error.Message = code, message
	writeErrorBody(w, status, body)
}

// fullRetryAfter is what a full server asks a new session to wait: a
// session ends when its client leaves, or at its idle timeout.
const fullRetryAfter = "5"

// refuseFull answers an initialize that would open one session more than
// the server takes (docs/design.md#server-and-bridge: 503 with Retry-After,
// never a crash).
func refuseFull(w http.ResponseWriter, sessions int) {
	var body wire.HTTPError
	body.Error.Code, body.Error.Sessions = wire.ErrCodeFull, sessions
	body.Error.Message = fmt.Sprintf("this server has %d sessions, its most; try again in %s s", sessions, fullRetryAfter)
	w.Header().Set("Retry-After", fullRetryAfter)
	writeErrorBody(w, http.StatusServiceUnavailable, body)
}

func writeErrorBody(w http.ResponseWriter, status int, body wire.HTTPError) {
	b, _ := json.Marshal(body)
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// codeOfStatus names the HTTP statuses that mcp-go answers by itself.
var codeOfStatus = map[int]string{
	http.StatusUnauthorized:          errCodeUnauthorized,
	http.StatusForbidden:             errCodeForbidden,
	http.StatusNotFound:              errCodeSessionNotFound,
	http.StatusMethodNotAllowed:      errCodeMethodNotAllowed,
	http.StatusRequestEntityTooLarge: errCodeTooLarge,
	http.StatusUnsupportedMediaType:  errCodeUnsupportedMedia,
	http.StatusServiceUnavailable:    errCodeUnavailable,
}

// codeForStatus names an HTTP status that mcp-go answered by itself.
func codeForStatus(status int) string {
	switch code, named := codeOfStatus[status]; {
	case named:
		return code
	case status >= 500:
		return errCodeInternal
	}
	return errCodeInvalidRequest
}

// jsonErrors stands between mcp-go and the client: a plain-text error that
// mcp-go writes by itself (http.Error style) is turned into the server's
// JSON error body, so that no refusal reaches a client in another shape.
// Everything else passes through untouched, flushes included.
type jsonErrors struct {
	http.ResponseWriter
	status  int    // the plain-text error being captured, 0 when passing through
	text    []byte // its body
	written bool
}

func (j *jsonErrors) WriteHeader(status int) {
	if j.written {
		return
	}
	j.written = true
	if status >= 400 && strings.HasPrefix(j.Header().Get("Content-Type"), "text/plain") {
		j.status = status
		return
	}
	j.ResponseWriter.WriteHeader(status)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if !j.written {
		j.WriteHeader(http.StatusOK)
	}
	if j.status != 0 {
		j.text = append(j.text, p...)
		return len(p), nil
	}
	return j.ResponseWriter.Write(p)
}

// Flush passes through, except while an error is being captured.
func (j *jsonErrors) Flush() {
	if j.status != 0 {
		return
	}
	if f, ok := j.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (j *jsonErrors) Unwrap() http.ResponseWriter { return j.ResponseWriter }

// finish writes the captured error, if any, as JSON.
func (j *jsonErrors) finish() {
	if j.status == 0 {
		return
	}
	msg := strings.TrimSpace(string(j.text))
	writeError(j.ResponseWriter, j.status, codeForStatus(j.status), msg)
}

var _ http.Flusher = (*jsonErrors)(nil)

// bufferWriter records one response in memory, as a batch member's answer
// (flushes are no-ops, so mcp-go may still choose an SSE response).
type bufferWriter struct {
	header http.Header
	status int
	body   []byte
}

func newBufferWriter() *bufferWriter { return &bufferWriter{header: http.Header{}} }

func (b *bufferWriter) Header() http.Header    { return b.header }
func (b *bufferWriter) WriteHeader(status int) { b.status = cmp.Or(b.status, status) }
func (b *bufferWriter) Write(p []byte) (int, error) {
	b.status = cmp.Or(b.status, http.StatusOK)
	b.body = append(b.body, p...)
	return len(p), nil
}
func (b *bufferWriter) Flush() {}

// copyTo writes what was recorded to w.
func (b *bufferWriter) copyTo(w http.ResponseWriter) {
	maps.Copy(w.Header(), b.header)
	w.WriteHeader(cmp.Or(b.status, http.StatusOK))
	_, _ = w.Write(b.body)
}
