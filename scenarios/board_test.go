package scenarios

// The board page (docs: README "The board page"): `board` gives its
// user a link that opens the page once, and says why there is none where
// no shared server runs. The page itself is proved in a browser by
// scenarios/browser.

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// `board` prints a link with a one-time token: spent once for a key that
// reads the board, refused the second time; the board is refused without
// either.
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
	if status, _, body := httpDo(t, http.MethodGet, url+"/board/api/peers", nil, nil); status != http.StatusUnauthorized || strings.Contains(string(body), "claude-code") {
		t.Fatalf("GET /board/api/peers without the link: %d %s", status, body)
	}
	if status, header, body := httpDo(t, http.MethodGet, link, nil, nil); status != http.StatusOK || !strings.Contains(string(body), "majordomus board") || header.Get("Set-Cookie") != "" {
		t.Fatalf("the link: %d %v %s", status, header, body)
	}
	status, header, body := httpDo(t, http.MethodPost, strings.Replace(link, "/board?", "/board/key?", 1), nil, nil) // as the page's script does
	key := regexp.MustCompile(`^\{"key":"([0-9a-f]{64})"\}$`).FindSubmatch(body)
	if status != http.StatusOK || key == nil || header.Get("Set-Cookie") != "" {
		t.Fatalf("spending the link's token: %d %v %s", status, header, body)
	}
	auth := map[string]string{"Authorization": "Bearer " + string(key[1])}
	if status, _, body := httpDo(t, http.MethodGet, url+"/board/api/peers", nil, auth); status != http.StatusOK || !strings.Contains(string(body), `"claude-code"`) {
		t.Fatalf("GET /board/api/peers with the key: %d %s", status, body)
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

// A server started from an executable since replaced (an upgrade in
// place) still serves the checkout's clients until the next one takes it
// over: `board`, run from the new file, opens that server's page, where
// its clients are, rather than say that no shared server runs; and takes
// nothing over.
func TestBoardOpensThePageOfAServerWhoseExecutableWasReplaced(t *testing.T) {
	dir := checkout(t)
	exe := binaryCopy(t)
	old := startBinary(t, exe, dir, "--http-port", "0")
	initialize(t, old, "claude-code")
	url := serverURL(t, old)
	rebuild(t, exe)
	code, stdout, stderr := runBinaryOnce(t, exe, dir, "", "board", "--no-open")
	if link := strings.TrimSpace(stdout); code != 0 || !strings.HasPrefix(link, url+"/board?token=") {
		t.Fatalf("board beside the server of a replaced executable, which serves this checkout's client: exit %d, %q\n%s", code, stdout, stderr)
	}
	if readLease(t, dir)["url"] != url {
		t.Fatal("board took the lease over")
	}
	// A copy of the checkout (cp -a) has that lease too, whose server
	// would prove the copied secret: its page is the original's, not the
	// copy's.
	copied := checkout(t)
	copyTree(t, filepath.Join(dir, ".ai", "local"), filepath.Join(copied, ".ai", "local"), false)
	code, stdout, stderr = runBinaryOnce(t, exe, copied, "", "board", "--no-open")
	if code != 12 || strings.Contains(stdout, url) {
		t.Fatalf("board in a copy of the checkout: exit %d, %q\n%s", code, stdout, stderr)
	}
}
