package board

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// pageSource is a board whose revision a test changes.
type pageSource struct {
	mu   sync.Mutex
	rev  string
	next chan struct{}
}

func (p *pageSource) PeersJSON() ([]byte, error) {
	return []byte(`{"count":1,"departed":0,"caller":"","peers":[{"id":"p1","client":{"name":"<img src=x>"}}]}`), nil
}
func (p *pageSource) OverlapsJSON() ([]byte, error) { return []byte(`{"count":0,"overlaps":[]}`), nil }
func (p *pageSource) ExecutionsJSON(limit int) ([]byte, error) {
	if limit < 1 || limit > 1000 {
		return nil, io.ErrUnexpectedEOF
	}
	return []byte(`{"count":0,"executions":[]}`), nil
}
func (p *pageSource) ServerJSON() ([]byte, error) { return []byte(`{"name":"majordomus"}`), nil }
func (p *pageSource) GraphJSON() ([]byte, error) {
	return []byte(`{"state":"leaseholder","graph":{}}`), nil
}
func (p *pageSource) Changes() (string, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next == nil {
		p.next = make(chan struct{})
	}
	return p.rev, p.next
}
func (p *pageSource) set(rev string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rev = rev
	if p.next != nil {
		close(p.next)
		p.next = nil
	}
}

// testSecret is the lease's secret of the tests' pages.
var testSecret = secret.New()

// served is a page served on a loopback port. end ends every request
// under way, as the server's shutdown does.
type served struct {
	url  string
	page *Page
	end  context.CancelFunc
}

// serve serves a page of src until the test ends.
func serve(t *testing.T, src Source) *served {
	t.Helper()
	page := New(src, testSecret, zap.NewNop(), zap.NewNop())
	base, end := context.WithCancel(context.Background())
	s := httptest.NewUnstartedServer(page)
	s.Config.BaseContext = func(net.Listener) context.Context { return base }
	s.Start()
	t.Cleanup(s.Close)
	t.Cleanup(end)
	return &served{url: s.URL, page: page, end: end}
}

// refusal reads a JSON error body.
func refusal(t *testing.T, body string) (e struct {
	Error struct{ Code, Message string }
}) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	return e
}

// clock is a settable clock for the board's tokens.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// boardRequest sends one request to the board, redirects not followed,
// with exactly the headers given.
func boardRequest(t *testing.T, url, method, path string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// draw draws a one-time token, returning the link it makes.
func draw(t *testing.T, url string) string {
	t.Helper()
	resp, body := boardRequest(t, url, http.MethodPost, "/board/token", "Authorization", secret.Authorization(testSecret))
	path := regexp.MustCompile(`"path":"(/board\?token=[0-9a-f]{64})"`).FindStringSubmatch(body)
	if resp.StatusCode != http.StatusOK || path == nil {
		t.Fatalf("POST /board/token: %d %s", resp.StatusCode, body)
	}
	return path[1]
}

// spend spends link's token as the page's script does, returning the
// answer and the key it gave ("" for none).
func spend(t *testing.T, url, link string) (resp *http.Response, body, key string) {
	t.Helper()
	resp, body = boardRequest(t, url, http.MethodPost, strings.Replace(link, "/board?", "/board/key?", 1), "Sec-Fetch-Site", "same-origin")
	if m := regexp.MustCompile(`^\{"key":"([0-9a-f]{64})"\}$`).FindStringSubmatch(body); m != nil {
		key = m[1]
	}
	return resp, body, key
}

// boardKey draws a one-time token and spends it, returning the
// Authorization header of the key it gave.
func boardKey(t *testing.T, url string) string {
	t.Helper()
	resp, body, key := spend(t, url, draw(t, url))
	if key == "" {
		t.Fatalf("spending a token: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	return secret.Scheme + " " + key
}

// Without a key the page gave or the lease's token, nothing of the board
// is answered: 401, with nothing of its data. The page's own files are
// anyone's, as they hold nothing of it.
func TestTheBoardRefusesWhoeverHasNoKey(t *testing.T) {
	s := serve(t, &pageSource{rev: "1"})
	spent := boardKey(t, s.url)
	s.page.keys = &keys{ttl: tokenTTL} // a server that gave spent's key, and restarted
	for _, path := range []string{"/board/api/peers", "/board/api/executions", "/board/api/server", "/board/api/graph",
		"/board/api/overlaps", "/board/events", "/board/nowhere"} {
		for _, h := range [][]string{nil, {"Authorization", secret.Authorization(secret.New())}, {"Authorization", spent},
			{"Cookie", "majordomus_board_1=" + strings.Fields(spent)[1]}} {
			resp, body := boardRequest(t, s.url, http.MethodGet, path, h...)
			if resp.StatusCode != http.StatusUnauthorized || refusal(t, body).Error.Code != "unauthorized" || strings.Contains(body, "img") || strings.Contains(body, "<") {
				t.Errorf("GET %s with %v: %d %s", path, h, resp.StatusCode, body)
			}
		}
	}
	for _, path := range shell {
		if resp, body := boardRequest(t, s.url, http.MethodGet, path); resp.StatusCode != http.StatusOK || strings.Contains(body, "img src") {
			t.Errorf("GET %s without a key: %d %s", path, resp.StatusCode, body)
		}
	}
	if resp, body := boardRequest(t, s.url, http.MethodPost, "/board/token", "Authorization", spent); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "token\":") {
		t.Errorf("POST /board/token without the lease's token: %d %s", resp.StatusCode, body)
	}
	if resp, body := boardRequest(t, s.url, http.MethodGet, "/board?token="+secret.New()); resp.StatusCode != http.StatusUnauthorized || strings.Contains(body, "key") {
		t.Errorf("a token never drawn was answered %d: %s", resp.StatusCode, body)
	}
}

// A one-time token is spent by its first use and dies at its time. Its
// link answers the page, whatever Sec-Fetch-Site says (`board` opens it
// from a file of its user's, so that the token is on no command line, and
// a navigation from a file is cross-site), and spends nothing; the page's
// script spends it (POST /board/key) for a key that it sends in
// Authorization. The key is never a cookie, which a browser would send to
// every port of the host, nor in an address, which a history would keep.
func TestABoardTokenIsSpentOnceForAKey(t *testing.T) {
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	src := &pageSource{rev: "1"}
	s := serve(t, src)
	s.page.now, s.page.keys = clk.Now, &keys{ttl: time.Minute}
	var key string
	for _, site := range []string{"none", "cross-site", ""} {
		link := draw(t, s.url)
		for _, method := range []string{http.MethodGet, http.MethodHead, http.MethodGet} {
			resp, body := boardRequest(t, s.url, method, link, "Sec-Fetch-Site", site)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("Content-Security-Policy") != csp ||
				(method == http.MethodGet) != strings.Contains(body, `<script src="/board/board.js"`) {
				t.Fatalf("%s %s from %q: %d %v %s", method, link, site, resp.StatusCode, resp.Header, body)
			}
		}
		resp, body, k := spend(t, s.url, link)
		if resp.StatusCode != http.StatusOK || k == "" || resp.Header.Get("Set-Cookie") != "" {
			t.Fatalf("spending the token: %d %v %s", resp.StatusCode, resp.Header, body)
		}
		if again, body, _ := spend(t, s.url, link); again.StatusCode != http.StatusUnauthorized || strings.Contains(body, "key\"") {
			t.Errorf("the token spent a second time: %d %s", again.StatusCode, body)
		}
		if again, body := boardRequest(t, s.url, http.MethodGet, link, "Sec-Fetch-Site", site); again.StatusCode != http.StatusUnauthorized || strings.Contains(body, "<script") {
			t.Errorf("the spent link opened again: %d %s", again.StatusCode, body)
		}
		key = secret.Scheme + " " + k
	}
	if resp, _ := boardRequest(t, s.url, http.MethodGet, "/board/key"); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET /board/key: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// A browser (it accepts text/html) is told on a page what happened and
	// what makes a new link; a script keeps the JSON.
	for link, want := range map[string]string{"/board?token=" + secret.New(): "used already or has expired", "/board/api/peers": "board is its user&#39;s only"} {
		resp, body := boardRequest(t, s.url, http.MethodGet, link, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" ||
			!strings.Contains(body, want) || !strings.Contains(body, "<code>majordomus-mcp board</code>") {
			t.Errorf("a browser opening %s: %d %q %s", link, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}

	resp, body := boardRequest(t, s.url, http.MethodGet, "/board")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `<script src="/board/board.js"`) {
		t.Fatalf("GET /board: %d %s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the page's policy is %q", csp)
	}
	for path, want := range map[string]string{"/board/": "text/html; charset=utf-8", "/board/board.js": "text/javascript; charset=utf-8",
		"/board/board.css": "text/css; charset=utf-8", "/board/api/openapi.json": "application/json", "/board/api/peers": "application/json"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			resp, body := boardRequest(t, s.url, method, path, "Authorization", key)
			if got := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || got != want || resp.Header.Get("X-Content-Type-Options") != "nosniff" || (method == http.MethodHead) != (body == "") {
				t.Errorf("%s %s: %d, %q, %d bytes; want %s", method, path, resp.StatusCode, got, len(body), want)
			}
		}
	}
	if _, body := boardRequest(t, s.url, http.MethodGet, "/board/api/peers", "Authorization", key); body != `{"count":1,"departed":0,"caller":"","peers":[{"id":"p1","client":{"name":"<img src=x>"}}]}` {
		t.Errorf("/board/api/peers answered %s, not the source's bytes", body)
	}
	if resp, _ := boardRequest(t, s.url, http.MethodGet, "/board/api/peers", "Cookie", "majordomus_board="+strings.Fields(key)[1]); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page's key as a cookie read the board: %d", resp.StatusCode)
	}
	if resp, _ := boardRequest(t, s.url, http.MethodPost, "/board/token", "Authorization", key); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the page's key drew a one-time token: %d", resp.StatusCode)
	}
	if _, body := boardRequest(t, s.url, http.MethodGet, "/board/api/server", "Authorization", secret.Authorization(testSecret)); body != `{"name":"majordomus"}` {
		t.Errorf("a script with the lease's token read %s", body)
	}
	for _, bad := range []string{"0", "x", "1001"} {
		if resp, body := boardRequest(t, s.url, http.MethodGet, "/board/api/executions?limit="+bad, "Authorization", key); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("limit %s: %d %s", bad, resp.StatusCode, body)
		}
	}
	if resp, _ := boardRequest(t, s.url, http.MethodPost, "/board/api/peers", "Authorization", key); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the read-only board: %d", resp.StatusCode)
	}

	resp, body = boardRequest(t, s.url, http.MethodPost, "/board/token", "Authorization", secret.Authorization(testSecret))
	late := regexp.MustCompile(`"path":"([^"]+)"`).FindStringSubmatch(body)
	if late == nil {
		t.Fatalf("POST /board/token: %d %s", resp.StatusCode, body)
	}
	clk.add(time.Minute)
	if resp, _ := boardRequest(t, s.url, http.MethodGet, late[1]); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a link opened at its token's expiry: %d", resp.StatusCode)
	}
	if resp, _, _ := spend(t, s.url, late[1]); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a token spent at its expiry: %d", resp.StatusCode)
	}
}

// Sec-Fetch-Site must be same-origin or none: another site (another port
// of this host is one) gets 403, whatever key it carries. (Host and Origin
// are the server's to check, as for /mcp.)
func TestTheBoardRefusesOtherSites(t *testing.T) {
	s := serve(t, &pageSource{rev: "1"})
	key := boardKey(t, s.url)
	host := strings.TrimPrefix(s.url, "http://")
	for _, h := range [][]string{
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"},
	} {
		for _, path := range []string{"/board", "/board/api/peers", "/board/events"} {
			resp, body := boardRequest(t, s.url, http.MethodGet, path, append([]string{"Authorization", key}, h...)...)
			if resp.StatusCode != http.StatusForbidden || strings.Contains(body, "img") {
				t.Errorf("GET %s with %v: %d %s", path, h, resp.StatusCode, body)
			}
		}
	}
	for _, h := range [][]string{{"Origin", "http://" + host, "Sec-Fetch-Site", "same-origin"}, {"Sec-Fetch-Site", "none"}} {
		if resp, body := boardRequest(t, s.url, http.MethodGet, "/board/api/peers", append([]string{"Authorization", key}, h...)...); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /board/api/peers with %v: %d %s", h, resp.StatusCode, body)
		}
	}
}

// /board/events says change at once, and again whenever the revision
// changes; and it ends with its request, which the server's shutdown ends.
func TestTheBoardsEventsFollowItsRevision(t *testing.T) {
	src := &pageSource{rev: "a"}
	s := serve(t, src)
	req, _ := http.NewRequest(http.MethodGet, s.url+"/board/events", nil)
	req.Header.Set("Authorization", boardKey(t, s.url))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("/board/events is %q", resp.Header.Get("Content-Type"))
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		for lines.Scan() {
			if data, ok := strings.CutPrefix(lines.Text(), "data: "); ok {
				return data
			}
		}
		return "(the stream ended)"
	}
	if got := next(); got != `"a"` {
		t.Fatalf("the first event said %s", got)
	}
	src.set("b")
	if got := next(); got != `"b"` {
		t.Fatalf("after a change the event said %s", got)
	}
	// A stream that held on would keep a graceful shutdown from ever
	// finishing.
	s.end()
	if got := next(); got != "(the stream ended)" {
		t.Fatalf("after the shutdown the stream said %s", got)
	}
}

// What a client supplied reaches the page as text only: no markup is
// built from strings, and no script runs inline (the policy would refuse
// it anyway).
func TestThePageBuildsNoMarkupFromData(t *testing.T) {
	js, err := fs.ReadFile(assets, "board.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"} {
		if strings.Contains(string(js), sink) {
			t.Errorf("board.js uses %s", sink)
		}
	}
	html, _ := fs.ReadFile(assets, "index.html")
	if m := regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]|\son[a-z]+=|style=|https?://[^w]`).Find(html); m != nil {
		t.Errorf("index.html has inline script, a handler, a style or a link out: %q", m)
	}
}

// The OpenAPI document is one, carries the project's license, and names
// every endpoint the board serves to scripts.
func TestTheOpenAPIDocumentNamesEveryEndpoint(t *testing.T) {
	raw, err := fs.ReadFile(assets, "api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		Info    struct {
			License struct{ Name, Identifier string } `json:"license"`
		} `json:"info"`
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi.json: %v, version %q", err, doc.OpenAPI)
	}
	if l := doc.Info.License; l.Name != "Apache-2.0" || l.Identifier != "Apache-2.0" {
		t.Errorf("openapi.json's info.license is %+v, not the project's Apache-2.0", l)
	}
	src, err := os.ReadFile("board.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"(?:GET|POST) (/board/(?:api/[a-z]+|events|token|key))"`).FindAllStringSubmatch(string(src), -1) {
		if _, ok := doc.Paths[m[1]]; !ok {
			t.Errorf("openapi.json does not describe %s", m[1])
		}
	}
	if len(doc.Paths) != 8 {
		t.Errorf("openapi.json describes %d paths", len(doc.Paths))
	}
}

// A reader that stopped reading (a frozen tab's) holds a stream's write:
// the stream still ends with its request, so that the server's shutdown
// is not held until its grace runs out.
func TestTheBoardsEventsEndForAReaderThatStoppedReading(t *testing.T) {
	// One revision larger than any socket's buffers: its event cannot be
	// written whole to a reader that reads nothing.
	src := &pageSource{rev: strings.Repeat("r", 16<<20)}
	page := New(src, testSecret, zap.NewNop(), zap.NewNop())
	base, end := context.WithCancel(context.Background())
	defer end()
	ended := make(chan struct{})
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page.ServeHTTP(w, r)
		if r.URL.Path == "/board/events" {
			close(ended)
		}
	}))
	s.Config.BaseContext = func(net.Listener) context.Context { return base }
	s.Start()
	defer s.Close()
	key := boardKey(t, s.URL)
	conn, err := net.Dial("tcp", s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	if _, err := fmt.Fprintf(conn, "GET /board/events HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n\r\n", s.Listener.Addr(), key); err != nil {
		t.Fatal(err)
	}
	// The stream reads its request and starts writing: its first bytes
	// arrive (and nothing more is read).
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	end() // as the server's shutdown does
	select {
	case <-ended:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream of a reader that stopped reading did not end with its request")
	}
}
