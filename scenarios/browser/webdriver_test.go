//go:build browser

package browser

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The browser is driven over the WebDriver protocol (W3C), JSON over HTTP,
// from the standard library: chromedriver starts headless Chromium and
// answers for it.
const (
	chromium     = "/usr/bin/chromium"
	chromedriver = "/usr/bin/chromedriver"
)

// driver is one chromedriver process.
type driver struct {
	url string
	cmd *exec.Cmd
}

// startDriver runs chromedriver on a free port and waits for it to say it
// started.
func startDriver(t *testing.T) *driver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(chromedriver, "--port="+strconv.Itoa(port))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", chromedriver, err)
	}
	d := &driver{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	started := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "started successfully") {
				started <- nil
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		started <- fmt.Errorf("chromedriver ended before it said it started")
	}()
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("chromedriver did not say it started")
	}
	return d
}

// session is one browser.
type session struct {
	t     *testing.T
	url   string // the driver's /session/{id}
	ended bool
}

// newSession starts headless Chromium, its window 1280×800, with the
// further command-line arguments given (a profile of its own, say).
func (d *driver) newSession(t *testing.T, args ...string) *session {
	t.Helper()
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args":   append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,800", "--hide-scrollbars"}, args...),
		},
	}}}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	wd(t, http.MethodPost, d.url+"/session", caps, &created)
	s := &session{t: t, url: d.url + "/session/" + created.SessionID}
	t.Cleanup(s.end)
	s.do(http.MethodPost, "/timeouts", map[string]any{"script": int(wait / time.Millisecond), "pageLoad": int(wait / time.Millisecond)}, nil)
	s.do(http.MethodPost, "/window/rect", map[string]any{"width": 1280, "height": 800}, nil)
	return s
}

// end closes the browser, which then writes what it keeps to its profile.
func (s *session) end() {
	if !s.ended {
		s.ended = true
		wd(s.t, http.MethodDelete, s.url, nil, nil)
	}
}

// wd sends one WebDriver command and decodes its value into out.
func wd(t *testing.T, method, url string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("WebDriver %s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var answer struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("WebDriver %s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(answer.Value, out); err != nil {
			t.Fatalf("WebDriver %s %s answered %s: %v", method, url, answer.Value, err)
		}
	}
}

func (s *session) do(method, path string, body, out any) {
	s.t.Helper()
	wd(s.t, method, s.url+path, body, out)
}

// open navigates to url and waits for the page to load.
func (s *session) open(url string) {
	s.t.Helper()
	s.do(http.MethodPost, "/url", map[string]any{"url": url}, nil)
}

// arrive waits for the window to reach url through the redirects and
// refreshes of the pages on the way (a script run in a page that moves on
// is cut off, so none is run until then). WebDriver tells no event of
// a navigation: its current URL is read until it is url.
func (s *session) arrive(url string) {
	s.t.Helper()
	var at string
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if s.do(http.MethodGet, "/url", nil, &at); at == url {
			return
		}
	}
	s.t.Fatalf("the window is at %s, never at %s", at, url)
}

// eval runs script in the page and decodes what it returns into out.
func (s *session) eval(script string, out any, args ...any) {
	s.t.Helper()
	if args == nil {
		args = []any{}
	}
	s.do(http.MethodPost, "/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// until waits, in the page, for the expression cond (a function body
// returning a truthy value) to hold: it is tried on every change of the
// document, so the wait ends with the event, not on a clock.
func (s *session) until(what, cond string) {
	s.t.Helper()
	script := `const done = arguments[arguments.length - 1];
const cond = () => { try { return (function () { ` + cond + ` })(); } catch (e) { return false; } };
if (cond()) { done(true); return; }
const seen = new MutationObserver(() => { if (cond()) { seen.disconnect(); done(true); } });
seen.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });`
	s.t.Logf("waiting in the browser for %s", what)
	var ok bool
	s.do(http.MethodPost, "/execute/async", map[string]any{"script": script, "args": []any{}}, &ok)
}

// screenshot is the window's PNG.
func (s *session) screenshot() []byte {
	s.t.Helper()
	var b64 string
	s.do(http.MethodGet, "/screenshot", nil, &b64)
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		s.t.Fatal(err)
	}
	return png
}

// typeInto sends text as keystrokes to the element css finds.
func (s *session) typeInto(css, text string) {
	s.t.Helper()
	var found map[string]string
	s.do(http.MethodPost, "/element", map[string]any{"using": "css selector", "value": css}, &found)
	var id string
	for _, v := range found {
		id = v // the element reference's one key is the protocol's constant
	}
	s.do(http.MethodPost, "/element/"+id+"/value", map[string]any{"text": text}, nil)
}
