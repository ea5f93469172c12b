package board

import (
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// Source is what the page shows, each answer a JSON document: the same
// bytes the MCP tools answer (package surface), and the state machine's
// graph with the server's current state. It must be safe for concurrent
// use.
type Source interface {
	PeersJSON() ([]byte, error)
	OverlapsJSON() ([]byte, error)
	// ExecutionsJSON answers for limit; an error is the limit's fault.
	ExecutionsJSON(limit int) ([]byte, error)
	ServerJSON() ([]byte, error)
	GraphJSON() ([]byte, error)
	// Changes returns the revision of what the page shows, but for the
	// passing of time (an uptime), and a channel closed when it next
	// changes.
	Changes() (revision string, next <-chan struct{})
}

// defaultExecutionsLimit is /board/api/executions' limit when none is
// given: majordomus_executions' own default.
const defaultExecutionsLimit = 50

//go:embed assets
var embedded embed.FS

// assets is the page's files as /board serves them.
var assets, _ = fs.Sub(embedded, "assets")

// assetTypes are the files' types by extension ("" is the page itself),
// whatever the system's MIME table says.
var assetTypes = map[string]string{
	"":      "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".json": "application/json",
}

// shell is the page's own files. They hold nothing of the board, so they
// are anyone's: a navigation cannot carry the page's key, which the
// page's script keeps and sends with what it reads.
var shell = []string{"/board", "/board/", "/board/board.js", "/board/board.css", "/board/api/openapi.json"}

// posted is the routes that draw or spend a token, each by its own
// credential: a read of one is answered 405, key or not.
var posted = []string{"/board/token", "/board/key"}

// csp lets the page load its own script, style and data and nothing
// else: no inline script, no frame around it, no form posted anywhere.
const csp = "default-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Page is the board page, an [http.Handler] of everything under /board.
type Page struct {
	src     Source
	secret  string
	keys    *keys
	now     func() time.Time
	log     *zap.Logger
	refused *zap.Logger
	mux     *http.ServeMux
}

// New builds the page of src. secret is the lease's: its token reads the
// page (a script's key) and draws the one-time tokens of a browser's.
// refused logs the refusals anyone who reaches the page may cause, as
// often as they like: a logger that holds repeats back (the server's).
func New(src Source, secret string, log, refused *zap.Logger) *Page {
	p := &Page{src: src, secret: secret, keys: &keys{ttl: tokenTTL}, now: time.Now, log: log, refused: refused, mux: http.NewServeMux()}
	files := http.StripPrefix("/board", http.FileServerFS(assets))
	static := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", assetTypes[path.Ext(r.URL.Path)])
		files.ServeHTTP(w, r)
	})
	for _, file := range shell {
		if file == "/board/" {
			file += "{$}"
		}
		p.mux.Handle("GET "+file, static)
	}
	p.mux.HandleFunc("GET /board/api/peers", p.answer(src.PeersJSON))
	p.mux.HandleFunc("GET /board/api/overlaps", p.answer(src.OverlapsJSON))
	p.mux.HandleFunc("GET /board/api/server", p.answer(src.ServerJSON))
	p.mux.HandleFunc("GET /board/api/graph", p.answer(src.GraphJSON))
	p.mux.HandleFunc("GET /board/api/executions", p.serveExecutions)
	p.mux.HandleFunc("GET /board/events", p.serveEvents)
	p.mux.HandleFunc("POST /board/token", p.serveToken)
	p.mux.HandleFunc("POST /board/key", p.serveKey)
	p.mux.HandleFunc("/board", p.serveElse)
	p.mux.HandleFunc("/board/", p.serveElse)
	return p
}

// ServeHTTP answers everything under /board, by the rules of the package
// doc: the one-time link, then Sec-Fetch-Site, then the key, then routes.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if r.URL.Path == "/board" && r.URL.Query().Has("token") && read {
		// The link is opened before the Sec-Fetch-Site rule: `board` opens
		// it from a file of its user's (so that the token is on no command
		// line), and a navigation from a file is cross-site. The token is
		// the credential, and nobody else can draw one.
		p.openLink(w, r)
		return
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		// Another port of this host is same-site, never same-origin.
		site = site[:min(len(site), 32)] // a browser's is one word; anyone's may be 64 KiB
		p.refused.Warn("a board request from another site was refused", zap.String("sec_fetch_site", site))
		refuse(w, http.StatusForbidden, "forbidden", fmt.Sprintf("a request from another origin was refused: Sec-Fetch-Site %q is not same-origin", site))
		return
	}
	if read && !slices.Contains(shell, r.URL.Path) && !slices.Contains(posted, r.URL.Path) && !p.Admits(r) {
		unauthorized(w, r, "the board is its user's only: run `majordomus-mcp board` in the checkout for a link that opens it")
		return
	}
	p.mux.ServeHTTP(w, r)
}

// serveElse answers what no route takes: a method the path does not
// serve (the board is read-only), or a path that is none of its.
func (p *Page) serveElse(w http.ResponseWriter, r *http.Request) {
	switch {
	case slices.Contains(posted, r.URL.Path):
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" "+r.URL.Path+" is not served; POST it")
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		refuse(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" "+r.URL.Path+" is not served; the board is read-only")
	default:
		refuse(w, http.StatusNotFound, "not_found", "no board route "+r.URL.Path+"; /board/api/openapi.json lists them")
	}
}

// Admits reports whether r's Authorization carries a key of the board: a
// key a link gave (a page's), or the lease's token (a script's, as for
// /mcp).
func (p *Page) Admits(r *http.Request) bool {
	header := r.Header.Get("Authorization")
	scheme, key, _ := strings.Cut(header, " ")
	return secret.Authorized(header, p.secret) || strings.EqualFold(scheme, secret.Scheme) && p.keys.admits(key)
}

// serveToken gives whoever holds the lease's token a one-time token of
// the page. Only a POST: a token is drawn, not read.
func (p *Page) serveToken(w http.ResponseWriter, r *http.Request) {
	if !secret.Authorized(r.Header.Get("Authorization"), p.secret) {
		unauthorized(w, r, "a board token is given to the lease's owner only: run `majordomus-mcp board`")
		return
	}
	token := p.keys.issue(p.now())
	writeJSON(w, r, fmt.Appendf(nil, `{"token":%q,"path":"/board?token=%s","expires_in_seconds":%d}`,
		token, token, int(p.keys.ttl/time.Second)))
}

// openLink answers GET /board?token=… with the page, while its token
// waits to be spent (else 401, saying so). The page's script spends it
// (POST /board/key), so that the page's key is never in an address, nor
// so in any history; opening the link spends nothing.
func (p *Page) openLink(w http.ResponseWriter, r *http.Request) {
	if !p.keys.pending(r.URL.Query().Get("token"), p.now()) {
		unauthorized(w, r, spentLink)
		return
	}
	p.mux.ServeHTTP(w, r)
}

// spentLink is what a link spent or expired is answered.
const spentLink = "this board link was used already or has expired: run `majordomus-mcp board` for a new one"

// serveKey spends the token of POST /board/key?token=… for a key of the
// page, which the page's script keeps (see the package doc).
func (p *Page) serveKey(w http.ResponseWriter, r *http.Request) {
	key, ok := p.keys.exchange(r.URL.Query().Get("token"), p.now())
	if !ok {
		refuse(w, http.StatusUnauthorized, "unauthorized", spentLink)
		return
	}
	writeJSON(w, r, fmt.Appendf(nil, `{"key":%q}`, key))
}

// answer serves what get answers, as it is.
func (p *Page) answer(get func() ([]byte, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := get()
		if err != nil {
			p.log.Warn("a board answer failed", zap.String("path", r.URL.Path), zap.Error(err))
			refuse(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
		writeJSON(w, r, b)
	}
}

func (p *Page) serveExecutions(w http.ResponseWriter, r *http.Request) {
	limit := defaultExecutionsLimit
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			refuse(w, http.StatusBadRequest, "invalid_request", "limit must be a whole number")
			return
		}
		limit = n
	}
	b, err := p.src.ExecutionsJSON(limit)
	if err != nil {
		refuse(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	writeJSON(w, r, b)
}

func writeJSON(w http.ResponseWriter, r *http.Request, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// unauthorized refuses r for want of a key: with a small page saying so
// to a browser's navigation (it accepts text/html), with the JSON error
// body to a script.
func unauthorized(w http.ResponseWriter, r *http.Request, message string) {
	w.Header().Set("WWW-Authenticate", secret.Scheme+` realm="majordomus"`)
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		refuse(w, http.StatusUnauthorized, "unauthorized", message)
		return
	}
	text := strings.ReplaceAll(html.EscapeString(message), "`majordomus-mcp board`", "<code>majordomus-mcp board</code>")
	notice(w, http.StatusUnauthorized, "", "<h1>No board here</h1><p>"+strings.ToUpper(text[:1])+text[1:]+".</p>")
}

// notice answers a small page of the board's own, head and body its
// markup (no script: the CSP allows a refresh).
func notice(w http.ResponseWriter, status int, head, body string) {
	w.Header().Set("Content-Type", assetTypes[""])
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<!doctype html><meta charset="utf-8">%s<title>majordomus-mcp board</title>%s`+"\n", head, body)
}

// refuse answers status with the server's JSON error body.
func refuse(w http.ResponseWriter, status int, code, message string) {
	b, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
