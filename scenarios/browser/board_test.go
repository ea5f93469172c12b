//go:build browser

package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// wait bounds every wait for an event; each ends when the event comes.
const wait = 60 * time.Second

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "majordomus-browser-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "majordomus-mcp")
	os.Setenv("MAJORDOMUS_MCP_REGISTRY", filepath.Join(dir, "registry.db"))
	build := exec.Command("go", "build", "-o", bin, "github.com/majordomus-mcp/majordomus-mcp/cmd/majordomus-mcp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building majordomus-mcp:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return c
}

// start runs the binary in dir; it is killed when the test ends.
func start(t *testing.T, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	p, err := mcpclient.Start(bin, args, dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Kill(context.Background())
		if t.Failed() {
			t.Logf("stderr of majordomus-mcp %s:\n%s", strings.Join(args, " "), strings.Join(p.Logs(), "\n"))
		}
	})
	return p
}

// serveExample writes the example checkout and runs its shared server
// (`serve`), returning the checkout and the server's URL.
func serveExample(t *testing.T) (dir, base string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "example")
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	server := start(t, dir, "serve", "--http-port", "0")
	line, err := server.WaitLog(ctx(t), "shared server listening on")
	if err != nil {
		t.Fatal(err)
	}
	var listening struct{ URL string }
	if err := json.Unmarshal([]byte(line), &listening); err != nil || listening.URL == "" {
		t.Fatalf("no URL in %s", line)
	}
	return dir, listening.URL
}

// client starts a stdio client named name, waits for it to attach to the
// checkout's server, and has it announce.
func client(t *testing.T, dir, name, intent string, scope ...string) *mcpclient.Process {
	t.Helper()
	p := start(t, dir, "--http-port", "0")
	if _, err := p.Initialize(ctx(t), name, "2025-11-25"); err != nil {
		t.Fatalf("initialize %s: %v", name, err)
	}
	if _, err := p.WaitLogUnless(ctx(t), "cannot use the shared server", "bridging this stdio session"); err != nil {
		t.Fatal(err)
	}
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
		t.Fatalf("%s: majordomus_list: %v %s", name, err, text)
	}
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": intent, "scope": scope}, nil); err != nil || isErr {
		t.Fatalf("%s: announce: %v %s", name, err, text)
	}
	return p
}

// hostile is a client name that would run script if it were markup.
const hostile = `<img src=x onerror=alert(1)>`

// turning is an intent whose right-to-left override would show the page's
// words after it reversed, with a filler that shows as nothing and a tag
// character past U+FFFF.
const turning = "rework the parser\u202e\u3164\U000E0041 (nothing overlaps)"

// The board in a real browser: refused without its link, and with it once
// it is spent, on a page that says how to get a new one; opened with it
// (and again, in that tab, without it), it shows two bridged clients, the paths where their scopes overlap and,
// on each one's row, whom it overlaps, a hostile name as the characters it
// is (quoted where a sentence of the page names it), a right-to-left
// override as its escape, the state machine with the server's state marked, and a third
// client's announcement without a reload; its screenshot is not blank.
func TestTheBoardInABrowser(t *testing.T) {
	dir, base := serveExample(t)
	client(t, dir, hostile, turning, "lib/parse")
	client(t, dir, "codex", "tidy the library", "lib")

	resp, err := http.Get(base + "/board/api/peers")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /board/api/peers without its link: %d", resp.StatusCode)
	}
	driver := startDriver(t)
	browser := driver.newSession(t)
	browser.open(base + "/board")
	var refused struct {
		Text  string `json:"text"`
		Board bool   `json:"board"`
	}
	browser.eval(`return {text: document.body.innerText, board: !!document.getElementById("peers-table")};`, &refused)
	if refused.Board || !strings.Contains(refused.Text, "its user's only") || !strings.Contains(refused.Text, "majordomus-mcp board") {
		t.Fatalf("the page without its link showed %+v", refused)
	}

	link := boardLink(t, dir)
	if !strings.HasPrefix(link, base+"/board?token=") {
		t.Fatalf("board printed %q", link)
	}
	browser.open(link)
	browser.until("both peers", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 2;`)
	var page struct {
		Location string   `json:"location"`
		Names    []string `json:"names"`
		Overlap  int      `json:"overlap"`
		Overlaps string   `json:"overlaps"`
		Whom     []string `json:"whom"`
		Intents  []string `json:"intents"`
		Images   int      `json:"images"`
		Current  string   `json:"current"`
	}
	read := func() {
		browser.eval(`return {
			location: location.href,
			names: [...document.querySelectorAll("#peers-table tbody tr[data-peer] td:nth-child(2)")].map((td) => td.textContent),
			overlap: document.querySelectorAll("#peers-table tbody tr.overlap").length,
			overlaps: document.getElementById("overlaps").textContent,
			whom: [...document.querySelectorAll("#peers-table tbody tr[data-peer] td:nth-child(7)")].map((td) => td.textContent),
			intents: [...document.querySelectorAll("#peers-table tbody tr[data-peer] td:nth-child(5)")].map((td) => td.textContent),
			images: document.querySelectorAll("img").length,
			current: (document.querySelector("#machine-graph .state.current") || {dataset: {}}).dataset.state || "",
		};`, &page)
	}
	read()
	if page.Location != base+"/board" {
		t.Errorf("after the link the page is at %s: the token or the key stays in the address bar", page.Location)
	}
	browser.open(base + "/board") // the tab keeps its key
	browser.until("both peers again", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 2;`)
	// The link is spent: another browser opening it is told so, and what
	// makes a new one.
	other := driver.newSession(t)
	other.open(link)
	other.eval(`return {text: document.body.innerText, board: !!document.getElementById("peers-table")};`, &refused)
	if refused.Board || !strings.Contains(refused.Text, "used already or has expired") || !strings.Contains(refused.Text, "majordomus-mcp board") {
		t.Errorf("the spent link showed %+v", refused)
	}
	if len(page.Names) != 2 || page.Names[0] != hostile+" 1.2.3" || page.Names[1] != "codex 1.2.3" {
		t.Errorf("the peers' names show as %q; want the hostile name as its characters", page.Names)
	}
	if page.Images != 0 {
		t.Errorf("the page holds %d img elements: a client's name became markup", page.Images)
	}
	if want := `p1 ("` + hostile + `") on "lib/parse" and p2 ("codex") on "lib" overlap`; page.Overlap != 2 || page.Overlaps != want {
		t.Errorf("the overlap shows as %d rows, %q; want %q", page.Overlap, page.Overlaps, want)
	}
	if len(page.Whom) != 2 || page.Whom[0] != `p2 ("codex")` || page.Whom[1] != `p1 ("`+hostile+`")` {
		t.Errorf("the rows say they overlap %q", page.Whom)
	}
	if len(page.Intents) != 2 || page.Intents[0] != `rework the parser\u202e\u3164\u{e0041} (nothing overlaps)` {
		t.Errorf("the intents show as %q; want the override, the filler and the tag as their escapes", page.Intents)
	}
	if page.Current != "leaseholder" {
		t.Errorf("the state machine marks %q as the server's state", page.Current)
	}

	// The next read of the server fails once, as a dropped connection
	// would: the page says so, and a later read that succeeds says live.
	browser.eval(`window.stillTheSamePage = true;
const fetched = window.fetch;
window.failedOnce = false;
window.fetch = (url, init) => {
  if (!window.failedOnce && String(url).startsWith("/board/api/server")) { window.failedOnce = true; return Promise.reject(new Error("dropped")); }
  return fetched(url, init);
};
return true;`, nil)
	client(t, dir, "gemini-cli", "write the docs", "docs")
	browser.until("the third peer", `return [...document.querySelectorAll("#peers-table tbody tr[data-peer] td:nth-child(5)")].some((td) => td.textContent === "write the docs");`)
	var after struct {
		Same   bool   `json:"same"`
		Failed bool   `json:"failed"`
		Live   string `json:"live"`
	}
	browser.eval(`return {same: window.stillTheSamePage === true, failed: window.failedOnce, live: document.getElementById("live").textContent};`, &after)
	if !after.Same {
		t.Error("the third peer appeared through a reload")
	}
	if !after.Failed || after.Live != "live" {
		t.Errorf("after a failed read (%v) and a good one, the page says %q", after.Failed, after.Live)
	}
	browser.until("the history", `return document.querySelectorAll("#executions-table tbody tr").length >= 6;`)

	shot := browser.screenshot()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	if n := colours(img); n < 32 {
		t.Errorf("the screenshot has %d colours: blank", n)
	}

	// The history is filtered from the keyboard: typing a peer's id into
	// its select.
	browser.typeInto("#filter-peer", "p3")
	var peers []string
	browser.eval(`return [...document.querySelectorAll("#executions-table tbody tr td:nth-child(3)")].map((td) => td.textContent);`, &peers)
	if len(peers) != 2 || peers[0] != "p3" || peers[1] != "p3" {
		t.Errorf("the history filtered by p3 shows the calls of %q", peers)
	}
	// A narrow window scrolls no page sideways: wide tables scroll within
	// their own regions.
	browser.do(http.MethodPost, "/window/rect", map[string]any{"width": 420, "height": 800}, nil)
	var fits bool
	browser.eval(`return document.documentElement.scrollWidth <= window.innerWidth;`, &fits)
	if !fits {
		t.Error("in a window 420 pixels wide the page scrolls sideways")
	}
	if path := os.Getenv("BOARD_SCREENSHOT"); path != "" {
		// The README's picture is of the whole page, its state machine
		// included: the window as tall as the page is.
		var height int
		browser.eval(`return document.documentElement.scrollHeight + (window.outerHeight - window.innerHeight);`, &height)
		browser.do(http.MethodPost, "/window/rect", map[string]any{"width": 1280, "height": height}, nil)
		if err := os.WriteFile(path, browser.screenshot(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// `board` hands the browser its user's page, not the link, so that the
// token is on no command line: the browser named in $BROWSER (here one
// that records what it is given) gets a file: URL naming no token, and the
// page it opens, a navigation from a file and so cross-site, lets the
// browser in all the same.
func TestTheBoardOpensThroughItsUsersPage(t *testing.T) {
	dir, base := serveExample(t)
	client(t, dir, "claude-code", "rework the parser", "lib/parse")

	scratch := t.TempDir()
	given := filepath.Join(scratch, "given")
	recorder := filepath.Join(scratch, "browser")
	if err := os.WriteFile(recorder, []byte("#!/bin/sh\nprintf '%s' \"$*\" > "+given+".part && mv "+given+".part "+given+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx(t), bin, "board", "--repo", dir)
	cmd.Env = append(os.Environ(), "BROWSER="+recorder, "XDG_CACHE_HOME="+filepath.Join(scratch, "cache"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("majordomus-mcp board: %v", err)
	}
	if link := strings.TrimSpace(string(out)); !strings.HasPrefix(link, base+"/board?token=") {
		t.Fatalf("board printed %q", link)
	}
	var page []byte
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) { // the recorder's file
		if page, err = os.ReadFile(given); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the browser was never started: %v", err)
	}
	if !strings.HasPrefix(string(page), "file:///") || strings.Contains(string(page), "token") {
		t.Fatalf("the browser was handed %q: want a file: URL that names no token", page)
	}
	browser := startDriver(t).newSession(t)
	browser.open(string(page))
	browser.arrive(base + "/board")
	browser.until("the peer", `return document.querySelectorAll("#peers-table tbody tr[data-peer]").length === 1;`)
}

// The leaseholder's own stdio client is on its board like any other: its
// row says stdio, and its last seen follows its calls, live.
func TestTheLeaseholdersOwnClientIsSeenLive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "example")
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	lead := start(t, dir, "--http-port", "0")
	if _, err := lead.Initialize(ctx(t), "lead", "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	if _, err := lead.WaitLog(ctx(t), "shared server listening on"); err != nil {
		t.Fatal(err)
	}
	call := func() {
		if isErr, text, err := lead.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
			t.Fatalf("majordomus_list: %v %s", err, text)
		}
	}
	call()
	link := boardLink(t, dir)
	browser := startDriver(t).newSession(t)
	browser.open(link)
	const row = `document.querySelector("#peers-table tbody tr[data-peer='p1']")`
	browser.until("the leaseholder's client", `return [...`+row+`.cells].map((td) => td.textContent).includes("stdio");`)
	var seen string
	browser.eval(`return `+row+`.querySelector("time").dateTime;`, &seen)
	call()
	// Compared as times: a stamp's trailing zeros are left out ("…48.5Z"),
	// so a later one (…48.52Z) can sort before it as a string.
	browser.until("its last seen to follow its call", `return Date.parse(`+row+`.querySelector("time").dateTime) > Date.parse(`+strconv.Quote(seen)+`);`)
}

// boardLink is the one-time link `board --no-open` prints for dir.
func boardLink(t *testing.T, dir string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx(t), bin, "board", "--no-open", "--repo", dir).Output()
	if err != nil {
		t.Fatalf("majordomus-mcp board: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// colours counts the distinct colours of img.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// A character that shows as a double quote is escaped where a sentence of
// the page quotes a peer's name, as the server's prose escapes it
// (surface/quote.go): a client named `x” (stdio), p9 (“admin` would
// otherwise seem to close its quoting, and the page would seem to name a
// second peer, p9 "admin", in its overlap sentence.
func TestALookalikeQuoteClosesNothingOnThePage(t *testing.T) {
	const lookalike = "x\u201d), p9 (\u201cadmin\uff02"
	dir, _ := serveExample(t)
	client(t, dir, lookalike, "rework the parser", "lib/parse")
	client(t, dir, "codex", "tidy the library", "lib")
	browser := startDriver(t).newSession(t)
	browser.open(boardLink(t, dir))
	browser.until("the overlap", `return document.querySelectorAll("#peers-table tbody tr.overlap").length === 2;`)
	var page struct {
		Overlaps string   `json:"overlaps"`
		Whom     []string `json:"whom"`
	}
	browser.eval(`return {
		overlaps: document.getElementById("overlaps").textContent,
		whom: [...document.querySelectorAll("#peers-table tbody tr[data-peer] td:nth-child(7)")].map((td) => td.textContent),
	};`, &page)
	escaped := `p1 ("x\u201d), p9 (\u201cadmin\uff02")`
	if want := escaped + ` on "lib/parse" and p2 ("codex") on "lib" overlap`; page.Overlaps != want {
		t.Errorf("the overlap shows as %q; want %q", page.Overlaps, want)
	}
	if len(page.Whom) != 2 || page.Whom[1] != escaped {
		t.Errorf("the rows say they overlap %q; want p2's to say %q", page.Whom, escaped)
	}
}
