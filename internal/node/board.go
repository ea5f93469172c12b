package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/browser"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// ErrNoBoard is why `board` found no page to open: no shared server runs
// for the checkout (its clients are served alone, or none runs), or the
// one that runs has none.
var ErrNoBoard = errors.New("no board page")

// BoardOptions configure [OpenBoard].
type BoardOptions struct {
	Times Timings
	// Open opens the link in the browser $BROWSER names, or the
	// desktop's where there is a desktop (package internal/browser),
	// through a page of this user's only (writeBoardOpener).
	Open bool
	Out  io.Writer // where the link is printed
}

// OpenBoard asks the checkout's shared server for a one-time link to its
// board page, prints it and, when asked and a desktop exists, opens it.
// The server is asked only once it has proved that it holds the lease's
// secret, and is asked with the secret's token, which only the lease's
// owner can read: the link is that user's alone.
func OpenBoard(ctx context.Context, co *Checkout, opts BoardOptions) error {
	times, err := ResolveTimings(co.Manifest.Server, opts.Times)
	if err != nil {
		return err
	}
	self, err := registry.SelfExecutable()
	if err != nil {
		return err
	}
	observer := newObserver(co, self, times)
	path := observer.Path
	o, err := observe(ctx, observer)
	var untrusted *untrustedLease
	if errors.As(err, &untrusted) {
		return fmt.Errorf("%w: the lease at %s is not trusted here (%v): a client that cannot trust it is served alone, and a client served alone has no page", ErrNoBoard, path, untrusted.err)
	}
	if err != nil {
		return fmt.Errorf("reading the lease: %w", err)
	}
	switch {
	case o.Verdict.Class == registry.Unusable: // by this process: another user's clients may share it
		return fmt.Errorf("%w: the lease at %s cannot be used here (%s): a client that cannot use it is served alone, and a client served alone has no page",
			ErrNoBoard, path, o.Verdict.Reason)
	case o.Verdict.Class == registry.Busy || o.Verdict.Class == registry.Binding:
		return fmt.Errorf("%w: the shared server the lease at %s names does not answer now (%s: %s); the board is its page: try again once it answers",
			ErrNoBoard, path, o.Verdict.Class, o.Verdict.Reason)
	case o.Verdict.Class == registry.Superseded && o.Lease != nil && o.Lease.HasURL() && o.Elsewhere == "":
		// Its server, of an executable since replaced or older, serves the
		// checkout's clients until the next one takes it over: its page is
		// theirs, once it proves it holds the lease (boardToken). A copied
		// lease's server is another checkout's.
	case o.Verdict.Class != registry.Live || o.Lease == nil || !o.Lease.HasURL():
		return fmt.Errorf("%w: no shared server runs for this checkout (the lease at %s is %s: %s); the board is a page of the shared server, which the first majordomus-mcp client here starts (or `majordomus-mcp serve`)",
			ErrNoBoard, path, o.Verdict.Class, o.Verdict.Reason)
	}
	base := strings.TrimSuffix(o.Lease.URLString(), "/")
	tokenPath, err := boardToken(ctx, base, o.Lease.Secret, times)
	if err != nil {
		return err
	}
	link := base + tokenPath
	if _, err := fmt.Fprintln(opts.Out, link); err != nil {
		return err
	}
	if opts.Open && browser.Found() { // nothing to open it: no page to write
		page, file, err := writeBoardOpener(link)
		if err != nil {
			return fmt.Errorf("writing the page that opens the board: %w (open the link above yourself)", err)
		}
		if opened, err := browser.Open(page); !opened {
			_ = os.Remove(file) // nothing reads it: its token stays unspent in no file
			if err != nil {
				return fmt.Errorf("opening %s in a browser: %w (open the link above yourself)", base+"/board", err)
			}
		}
	}
	return nil
}

// writeBoardOpener writes the page that sends a browser on to link into a
// file of this user's only, and returns the file's URL and path. The
// browser is handed that URL, not the link, because a command line is
// readable by every user of the host (ps), and the link's token opens the
// board to whoever spends it first. One file per server, replaced at every
// link, and removed once stale (dropStalePages).
func writeBoardOpener(link string) (page, file string, err error) {
	u, err := url.Parse(link)
	if err != nil {
		return "", "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", "", err
	}
	dir := filepath.Join(cache, "majordomus-mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	dropStalePages(dir, time.Now())
	f, err := os.CreateTemp(dir, "board-*.html") // 0600
	if err != nil {
		return "", "", err
	}
	defer os.Remove(f.Name()) // once renamed, nothing
	doc := fmt.Sprintf("<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">"+
		"<meta http-equiv=\"refresh\" content=\"0;url=%[1]s\"><title>majordomus-mcp board</title>"+
		"<p><a href=\"%[1]s\">Open the board</a></p>\n", html.EscapeString(link))
	if _, err := f.WriteString(doc); err != nil {
		f.Close()
		return "", "", err
	}
	if err := f.Close(); err != nil {
		return "", "", err
	}
	path := filepath.Join(dir, "board-"+u.Port()+".html")
	if err := os.Rename(f.Name(), path); err != nil {
		return "", "", err
	}
	return fileURL(path), path, nil
}

// boardPageKept is how long a page writeBoardOpener wrote is kept: its
// link's token is spent within two minutes (transport/board), and the page
// opens nothing after.
const boardPageKept = time.Hour

// dropStalePages removes the pages in dir older than boardPageKept: each
// server's is named by its port, and a server takes a new one at each
// start wherever another holds the default.
func dropStalePages(dir string, now time.Time) {
	pages, _ := filepath.Glob(filepath.Join(dir, "board-*.html"))
	for _, p := range pages {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && now.Sub(fi.ModTime()) > boardPageKept {
			_ = os.Remove(p)
		}
	}
}

// fileURL is the file: URL of an absolute path, a Windows one (C:\…)
// included.
func fileURL(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// boardToken draws a one-time token from the server at base, once it has
// proved it holds key, and returns the path that spends it.
func boardToken(ctx context.Context, base, key string, times Timings) (string, error) {
	status, body, err := registry.AskProven(ctx, base, key, times.ProbeTimeout, http.MethodPost, "/board/token", 64<<10)
	if errors.Is(err, registry.ErrNotProven) {
		return "", fmt.Errorf("%w: the shared server at %s: %v", ErrNoBoard, base, err)
	}
	if err != nil {
		return "", fmt.Errorf("asking %s for a board link: %w", base, err)
	}
	if status == http.StatusNotFound {
		return "", fmt.Errorf("%w: the shared server at %s has no board page (an older majordomus-mcp serves this checkout)", ErrNoBoard, base)
	}
	var answer struct {
		Path string `json:"path"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &answer) != nil || !strings.HasPrefix(answer.Path, "/board?token=") {
		return "", fmt.Errorf("asking %s for a board link: status %d: %s", base, status, strings.TrimSpace(string(body)))
	}
	return answer.Path, nil
}
