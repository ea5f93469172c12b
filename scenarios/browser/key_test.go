//go:build browser

package browser

// The page's key: it reaches no other server of the host and no address,
// needs no storage, and the page says when its server froze.

import (
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/majordomus-mcp/majordomus-mcp/example"
)

// Browsers keep cookies apart by host, not by port: whatever key the page
// holds, another server of this host (another user's, on another port)
// that the browser visits, and whose page asks for a path under /board,
// is sent nothing of it.
func TestAnotherPortOfThisHostIsSentNoKey(t *testing.T) {
	dir, base := serveExample(t)
	client(t, dir, "claude-code", "rework the parser", "lib/parse")
	var mu sync.Mutex
	var sent []string // every request's Cookie and Authorization headers
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent = append(sent, r.URL.Path+" Cookie: "+r.Header.Get("Cookie")+" Authorization: "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.URL.Path == "/board/page" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<!doctype html><script>fetch("/board/api/peers", {credentials: "include"}).finally(() => { document.title = "asked"; });</script>`)
		}
	}))
	t.Cleanup(other.Close)
	if !strings.HasPrefix(other.URL, "http://127.0.0.1:") || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("the servers are at %s and %s, not both on 127.0.0.1", base, other.URL)
	}

	link := boardLink(t, dir)
	browser := startDriver(t).newSession(t)
	browser.open(link)
	browser.until("the peer", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 1;`)
	browser.open(other.URL + "/board/page")
	browser.until("the other page's request", `return document.title === "asked";`)
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(sent, func(s string) bool { return strings.HasPrefix(s, "/board/api/peers ") }) {
		t.Fatalf("the other server was asked %q", sent)
	}
	for _, s := range sent { // the page, its request and the browser's own (an icon)
		if strings.Contains(s, "majordomus") || !strings.HasSuffix(s, "Cookie:  Authorization: ") {
			t.Errorf("the other server was sent %q", s)
		}
	}
}

// The page's key is in no address, and so in no history: the browser's
// profile, once it is closed, names the link (its token spent) and the
// page, never the key the tab keeps.
func TestTheBoardsKeyIsInNoHistory(t *testing.T) {
	dir, base := serveExample(t)
	client(t, dir, "claude-code", "rework the parser", "lib/parse")
	link := boardLink(t, dir)
	profile := t.TempDir()
	browser := startDriver(t).newSession(t, "--user-data-dir="+profile)
	browser.open(link)
	browser.until("the peer", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 1;`)
	var key string
	browser.eval(`return sessionStorage.getItem("majordomus-board-key");`, &key)
	if len(key) != 64 {
		t.Fatalf("the tab keeps the key %q", key)
	}
	browser.end()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(profile, "Default", "History")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT url FROM urls`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var urls []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u)
	}
	if !slices.Contains(urls, base+"/board") {
		t.Fatalf("the history holds %q, not the page: no proof", urls)
	}
	for _, u := range urls {
		if strings.Contains(u, key) {
			t.Errorf("the history holds the key: %s", u)
		}
	}
}

// A browser that refuses the page storage (site data blocked) still shows
// the board: the page holds its key for as long as it is open.
func TestTheBoardShowsWithoutStorage(t *testing.T) {
	dir, _ := serveExample(t)
	client(t, dir, "claude-code", "rework the parser", "lib/parse")
	link := boardLink(t, dir)
	profile := t.TempDir()
	if err := os.MkdirAll(filepath.Join(profile, "Default"), 0o700); err != nil {
		t.Fatal(err)
	}
	blocked := `{"profile":{"default_content_setting_values":{"cookies":2}}}` // no site data at all
	if err := os.WriteFile(filepath.Join(profile, "Default", "Preferences"), []byte(blocked), 0o600); err != nil {
		t.Fatal(err)
	}
	browser := startDriver(t).newSession(t, "--user-data-dir="+profile)
	browser.open(link)
	var refused bool
	browser.eval(`try { sessionStorage.getItem("x"); return false; } catch (e) { return true; }`, &refused)
	if !refused {
		t.Fatal("the browser let the page use its storage: no proof")
	}
	browser.until("the peer", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 1;`)
}

// A page whose server froze (SIGSTOP) says it is gone or frozen once the
// server's stream has been silent for two of its keep-alives and some
// (until 2026-12-06 it said only that it might have stopped, and named it
// gone after three more silent tries: two minutes), rather than showing
// live what no longer is; the server continued, the page is live again;
// the server killed, the page says so, then that it is gone.
func TestTheBoardNoticesItsServerFroze(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "example")
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	server := start(t, dir, "serve", "--http-port", "0")
	if _, err := server.WaitLog(ctx(t), "shared server listening on"); err != nil {
		t.Fatal(err)
	}
	link := boardLink(t, dir)
	browser := startDriver(t).newSession(t)
	browser.open(link)
	browser.until("live", `return document.getElementById("live").textContent === "live";`)
	if err := server.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	continued := false
	t.Cleanup(func() {
		if !continued {
			_ = server.Signal(syscall.SIGCONT)
		}
	})
	frozen := time.Now()
	browser.until("the page to say its server went silent", `return document.getElementById("live").textContent.startsWith("disconnected, retrying: the server is gone, or frozen");`)
	t.Logf("named gone or frozen %s after the freeze", time.Since(frozen).Round(time.Second))
	continued = true
	if err := server.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	browser.until("live again", `return document.getElementById("live").textContent === "live";`)
	// Killed, it cuts the stream and refuses the page at once: the page
	// says it may have stopped, and that it is gone once nothing answered
	// for 10 s (a stream cut short is heard from as it ends, not at its
	// last keep-alive).
	if err := server.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	browser.until("the page to say its server may have stopped", `return document.getElementById("live").textContent.startsWith("disconnected: the server may have stopped");`)
	browser.until("the page to say its server is gone", `return document.getElementById("live").textContent.startsWith("disconnected, retrying: the server is gone");`)
}
