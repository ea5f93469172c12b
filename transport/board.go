package transport

import (
	"embed"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// BoardSource is what the board page shows, each answer a JSON document:
// the same bytes the MCP tools answer (package surface), and the state
// machine's graph with the server's current state. It must be safe for
// concurrent use.
type BoardSource interface {
	Peers() ([]byte, error)
	Overlaps() ([]byte, error)
	// Executions answers for limit; an error is the limit's fault.
	Executions(limit int) ([]byte, error)
	Server() ([]byte, error)
	Graph() ([]byte, error)
	// Revision changes whenever anything the page shows changes, but for
	// the passing of time (an uptime): /board/events tells the page so.
	Revision() string
}

// DefaultBoardPoll is how often an open /board/events stream compares the
// source's revision: a change reaches the page within that and a fetch.
const DefaultBoardPoll = 250 * time.Millisecond

// defaultExecutionsLimit is /board/api/executions' limit when none is
// given: majordomus_executions' own default.
const defaultExecutionsLimit = 50

//go:embed board
var boardFiles embed.FS

// boardCSP lets the page load its own script, style and data and nothing
// else: no inline script, no frame around it, no form posted anywhere.
const boardCSP = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// serveBoard answers everything under /board: the page, its files, its
// JSON endpoints, its event stream and the one-time token. Without a key
// (the cookie, or the lease's token for a script) it answers 401 and
// nothing of the board.
func (h *HTTPServer) serveBoard(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Board == nil {
		writeError(w, http.StatusNotFound, errCodeNotFound, "this server has no board page")
		return
	}
	if r.URL.Path == "/board" && r.URL.Query().Has("token") && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		// The link is spent before the Sec-Fetch-Site rule: `board` opens
		// it from a file of its user's (so that the token is on no command
		// line), and a navigation from a file is cross-site. The token is
		// the credential, and nobody else can draw one.
		if err := h.originAllowed(r); err != nil {
			writeError(w, http.StatusForbidden, errCodeForbidden, "a request from another origin was refused: "+err.Error())
			return
		}
		h.exchangeBoardToken(w, r)
		return
	}
	if err := h.boardRequestAllowed(r); err != nil {
		h.log.Warn("a board request from another site was refused", zap.String("origin", r.Header.Get("Origin")),
			zap.String("sec_fetch_site", r.Header.Get("Sec-Fetch-Site")), zap.Error(err))
		writeError(w, http.StatusForbidden, errCodeForbidden, "a request from another origin was refused: "+err.Error())
		return
	}
	if r.URL.Path == "/board/token" {
		h.serveBoardToken(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, errCodeMethodNotAllowed, r.Method+" "+r.URL.Path+" is not served; the board is read-only")
		return
	}
	if !h.boardAdmits(r) {
		w.Header().Set("WWW-Authenticate", secret.Scheme+` realm="majordomus"`)
		writeError(w, http.StatusUnauthorized, errCodeUnauthorized,
			"the board is its user's only: run `majordomus-mcp board` in the checkout for a link that opens it")
		return
	}
	switch r.URL.Path {
	case "/board", "/board/":
		h.serveBoardFile(w, r, "board/index.html", "text/html; charset=utf-8")
	case "/board/board.js":
		h.serveBoardFile(w, r, "board/board.js", "text/javascript; charset=utf-8")
	case "/board/board.css":
		h.serveBoardFile(w, r, "board/board.css", "text/css; charset=utf-8")
	case "/board/api/openapi.json":
		h.serveBoardFile(w, r, "board/openapi.json", "application/json")
	case "/board/api/peers":
		h.serveBoardJSON(w, r, h.cfg.Board.Peers)
	case "/board/api/overlaps":
		h.serveBoardJSON(w, r, h.cfg.Board.Overlaps)
	case "/board/api/server":
		h.serveBoardJSON(w, r, h.cfg.Board.Server)
	case "/board/api/graph":
		h.serveBoardJSON(w, r, h.cfg.Board.Graph)
	case "/board/api/executions":
		limit := defaultExecutionsLimit
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, errCodeInvalidRequest, "limit must be a whole number")
				return
			}
			limit = n
		}
		b, err := h.cfg.Board.Executions(limit)
		if err != nil {
			writeError(w, http.StatusBadRequest, errCodeInvalidRequest, err.Error())
			return
		}
		writeBoardJSON(w, r, b)
	case "/board/events":
		h.serveBoardEvents(w, r)
	default:
		writeError(w, http.StatusNotFound, errCodeNotFound, "no board route "+r.URL.Path+"; /board/api/openapi.json lists them")
	}
}

// boardRequestAllowed refuses what a browser sends on another site's
// behalf: an Origin that is not this server's (as for /mcp), and a
// Sec-Fetch-Site other than same-origin or none (a link the user opened
// himself); another port of this host is same-site, never same-origin.
func (h *HTTPServer) boardRequestAllowed(r *http.Request) error {
	if err := h.originAllowed(r); err != nil {
		return err
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	default:
		return fmt.Errorf("Sec-Fetch-Site %q is not same-origin", site)
	}
}

// boardAdmits reports whether r carries a key of the board: its cookie,
// or the lease's token (a script's, as for /mcp).
func (h *HTTPServer) boardAdmits(r *http.Request) bool {
	if secret.Authorized(r.Header.Get("Authorization"), h.cfg.Secret) {
		return true
	}
	c, err := r.Cookie(boardCookieName(r))
	return err == nil && h.boardKeys.admits(c.Value)
}

// boardCookieName names the cookie after the server's port: cookies do not
// tell ports apart, so two checkouts' pages in one browser keep theirs.
func boardCookieName(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		if _, port, err := net.SplitHostPort(local.String()); err == nil {
			return "majordomus_board_" + port
		}
	}
	return "majordomus_board"
}

// serveBoardToken gives whoever holds the lease's token a one-time token
// of the page. Only a POST: a token is drawn, not read.
func (h *HTTPServer) serveBoardToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, errCodeMethodNotAllowed, r.Method+" /board/token is not served; POST it")
		return
	}
	if !secret.Authorized(r.Header.Get("Authorization"), h.cfg.Secret) {
		w.Header().Set("WWW-Authenticate", secret.Scheme+` realm="majordomus"`)
		writeError(w, http.StatusUnauthorized, errCodeUnauthorized,
			"a board token is given to the lease's owner only: run `majordomus-mcp board`")
		return
	}
	token := h.boardKeys.issue(h.cfg.Now())
	b := fmt.Appendf(nil, `{"token":%q,"path":"/board?token=%s","expires_in_seconds":%d}`,
		token, token, int(h.boardKeys.ttl/time.Second))
	writeBoardJSON(w, r, b)
}

// exchangeBoardToken spends the token of GET /board?token=… for a cookie
// and sends the browser to /board without it, so that the link in its
// history opens nothing.
func (h *HTTPServer) exchangeBoardToken(w http.ResponseWriter, r *http.Request) {
	cookie, ok := h.boardKeys.exchange(r.URL.Query().Get("token"), h.cfg.Now())
	if !ok && h.boardAdmits(r) {
		// The link opened again (a restored tab) by a browser the page
		// already let in: it goes on to the page, with nothing new.
		w.Header().Set("Location", "/board")
		w.WriteHeader(http.StatusSeeOther)
		return
	}
	if !ok {
		writeError(w, http.StatusUnauthorized, errCodeUnauthorized,
			"this board link was used already or has expired: run `majordomus-mcp board` for a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     boardCookieName(r),
		Value:    cookie,
		Path:     "/board",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
	})
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		// A browser sends no SameSite=Strict cookie along a redirect that a
		// cross-site navigation began: the page moves on by itself, a
		// navigation of this origin's own.
		boardHeaders(w, "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(boardEntered))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Location", "/board")
	w.WriteHeader(http.StatusSeeOther)
}

// boardEntered is the page a link spent from another site answers: it
// moves on to the board (no script: the CSP allows a refresh).
const boardEntered = `<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/board">` +
	`<title>majordomus-mcp board</title><p><a href="/board">Open the board</a></p>` + "\n"

// boardHeaders are the headers of everything the board answers.
func boardHeaders(w http.ResponseWriter, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", boardCSP)
	h.Set("X-Frame-Options", "DENY")
}

func (h *HTTPServer) serveBoardFile(w http.ResponseWriter, r *http.Request, name, contentType string) {
	b, err := boardFiles.ReadFile(name)
	if err != nil {
		writeError(w, http.StatusInternalServerError, errCodeInternal, "the board's "+name+" is not in this binary")
		return
	}
	boardHeaders(w, contentType)
	writeBody(w, r, b)
}

func (h *HTTPServer) serveBoardJSON(w http.ResponseWriter, r *http.Request, get func() ([]byte, error)) {
	b, err := get()
	if err != nil {
		h.log.Warn("a board answer failed", zap.String("path", r.URL.Path), zap.Error(err))
		writeError(w, http.StatusInternalServerError, errCodeInternal, err.Error())
		return
	}
	writeBoardJSON(w, r, b)
}

func writeBoardJSON(w http.ResponseWriter, r *http.Request, b []byte) {
	boardHeaders(w, "application/json")
	writeBody(w, r, b)
}

func writeBody(w http.ResponseWriter, r *http.Request, b []byte) {
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// isBoardPath reports whether path is the board's.
func isBoardPath(path string) bool { return path == "/board" || strings.HasPrefix(path, "/board/") }
