package scenarios

// The board page (docs: README "The board page"): `board` gives its
// user a link that opens the page once, and says why there is none where
// no shared server runs. The page itself is proved in a browser by
// scenarios/browser.

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noRedirect is a client that shows a redirect rather than follow it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// `board` prints a link with a one-time token: spent once for a cookie
// that opens the page, refused the second time; the page is refused
// without either.
func TestTheBoardLinkOpensThePageOnce(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	code, stdout, stderr := runOnce(t, dir, "", "board", "--no-open")
	link := strings.TrimSpace(stdout)
	if code != 0 || !strings.HasPrefix(link, url+"/board?token=") || strings.Contains(link, readLease(t, dir)["secret"].(string)) {
		t.Fatalf("board: exit %d, printed %q\n%s", code, stdout, stderr)
	}
	if status, _, body := httpDo(t, http.MethodGet, url+"/board", nil, nil); status != http.StatusUnauthorized || strings.Contains(string(body), "<") {
		t.Fatalf("GET /board without the link: %d %s", status, body)
	}
	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/board" {
		t.Fatalf("the link: %d, cookies %+v", resp.StatusCode, cookies)
	}
	cookie := map[string]string{"Cookie": cookies[0].Name + "=" + cookies[0].Value}
	if status, header, body := httpDo(t, http.MethodGet, url+"/board", nil, cookie); status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "majordomus board") {
		t.Fatalf("GET /board with the cookie: %d %s", status, body)
	}
	if status, _, body := httpDo(t, http.MethodGet, link, nil, nil); status != http.StatusUnauthorized {
		t.Fatalf("the link spent a second time: %d %s", status, body)
	}
	server := connect(t, dir) // a script's way in: the header status shows
	if status, _, body := httpDo(t, http.MethodGet, server.base()+"/board/api/peers", nil, server.with(nil)); status != http.StatusOK || !strings.Contains(string(body), `"caller":""`) || !strings.Contains(string(body), `"claude-code"`) {
		t.Fatalf("/board/api/peers with the lease's token: %d %s", status, body)
	}
}

// Where no shared server runs — none started, or a client served alone —
// `board` says why, and exits 12.
func TestBoardSaysWhyThereIsNoPage(t *testing.T) {
	dir := checkout(t)
	code, stdout, stderr := runOnce(t, dir, "", "board", "--no-open")
	if code != 12 || stdout != "" || !strings.Contains(stderr, "no shared server runs for this checkout") {
		t.Fatalf("board without a server: exit %d, %q\n%s", code, stdout, stderr)
	}

	os.MkdirAll(filepath.Join(dir, ".ai/local"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := shared(t, dir)
	if _, err := p.WaitLog(ctx(t), "cannot use the shared server", "serving this client alone"); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runOnce(t, dir, "", "board", "--no-open")
	if code != 12 || stdout != "" || !strings.Contains(stderr, "a client served alone has no page") || !strings.Contains(stderr, "state") {
		t.Fatalf("board beside a client served alone: exit %d, %q\n%s", code, stdout, stderr)
	}
}
