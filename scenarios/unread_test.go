package scenarios

// One host never stalls the others (docs/design.md#sharing-heals): the
// leaseholder's own host may stop reading its stdout and stderr, and every
// other session is answered and notified as before.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A leaseholder whose host stops reading both its stdout and its stderr
// (pipes nobody reads, filled past what any pipe holds) stalls nobody:
// requests that log are answered, a client speaking HTTP directly is
// served, a new client attaches and is answered and notified, another
// attaches after it; what stderr could not take is
// dropped and counted (majordomus_server), and said on stderr once the
// host reads again, where every answer owed to the leaseholder's own
// client is waiting for it.
func TestALeaseholderWhoseHostStopsReadingStallsNobody(t *testing.T) {
	dir := checkout(t)
	logFile := filepath.Join(t.TempDir(), "leaseholder.log")
	a := startUnread(t, dir, "--http-port", "0", "--log-file", logFile)
	a.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`)
	a.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitFileLine(t, logFile, "shared server listening on")
	server := connect(t, dir)

	// Its own client asks for more than any pipe holds (tools/list is
	// about 4 KiB), then announces what it works on: its answers wait in
	// a stdout nobody reads.
	const owed = 300
	for id := 2; id < 2+owed; id++ {
		a.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
	}
	a.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"the stalled host","scope":["docs"]}}}`, 2+owed))
	// Clients speaking HTTP directly open sessions and end them, each
	// logged in five lines (its session opened and closed, here and in
	// the HTTP server, and its peer) of some 250 bytes: 2 MiB of lines,
	// more than a pipe and the log's queue hold.
	const sessions = 1600
	name := strings.Repeat("a", 64) // as much of a name as a line quotes
	for i := range sessions {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"` + name + `","version":"1"}}}`)
		status, header, answer := httpDo(t, http.MethodPost, server.URL, body, server.with(nil))
		if status != http.StatusOK {
			t.Fatalf("session %d: %d %s", i, status, answer)
		}
		(&plainSession{t: t, c: server, sid: header.Get("Mcp-Session-Id")}).end()
	}
	// The log file, written as lines come, has every one of them.
	if n := strings.Count(readFile(t, logFile), `"msg":"peer initialized"`); n != sessions+1 { // and the own client
		t.Fatalf("the log file has %d of the %d sessions' peers", n, sessions+1)
	}

	// A client speaking HTTP directly opens a session and sees the
	// announcement: the leaseholder read every request of its own client
	// (1.3 MiB of answers: its stdout is full), and recorded the last in
	// the checkout's state before it could answer it.
	waitFileLine(t, statePath(dir), "the stalled host")
	plain := &plainSession{t: t, c: server, sid: openPlainSession(t, server)}
	r, err := plain.call("tools/call", map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}})
	if err != nil || !strings.Contains(string(r.Result), "the stalled host") {
		t.Fatalf("majordomus_peers in a direct session: %s %v", r.Result, err)
	}
	plain.end()

	b := shared(t, dir)
	initialize(t, b, "codex")
	var report struct {
		Leaseholder     bool
		LogLinesDropped int `json:"log_lines_dropped"`
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_server", nil, &report); err != nil || isErr {
		t.Fatalf("majordomus_server through the bridge: %s %v", text, err)
	}
	if !report.Leaseholder || report.LogLinesDropped == 0 {
		t.Fatalf("the leaseholder's report counts no dropped log line: %+v", report)
	}
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	if _, err := b.WaitFrame(ctx(t), "resources/list_changed", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	if board := peersOf(t, c); board.Count != 3 || board.Peers[0].Announcement == nil {
		t.Fatalf("the board of the third client: %+v", board)
	}

	// The host reads again: every answer its client was owed is there, and
	// stderr says how many lines it missed.
	stdout, stderr := a.stdout.read(), a.stderr.read()
	for id := 1; id <= 2+owed; id++ {
		stdout.wait(t, fmt.Sprintf(`"id":%d,"result"`, id))
	}
	// A notice stands in the place of each run of lines dropped (the
	// queue had room again for a line or two between runs): together they
	// count what majordomus_server counted, or more.
	stderr.waitUntil(t, fmt.Sprintf("notices counting the %d lines majordomus_server counted dropped", report.LogLinesDropped), func(lines []string) bool {
		total := 0
		for _, line := range lines {
			var notice struct {
				Msg     string
				Dropped int
			}
			if json.Unmarshal([]byte(line), &notice) == nil && notice.Msg == "log lines dropped" {
				total += notice.Dropped
			}
		}
		return total >= report.LogLinesDropped
	})
	assertOnlyFrames(t, stdout.all())
}

// stalledLeaseholder starts a leaseholder whose host has stopped reading
// its stdout: it owes its client more answers than a pipe holds, and a
// list_changed waits behind them.
func stalledLeaseholder(t *testing.T) (dir, logFile string, a *unreadProcess) {
	dir = checkout(t)
	logFile = filepath.Join(t.TempDir(), "leaseholder.log")
	a = startUnread(t, dir, "--http-port", "0", "--log-file", logFile)
	a.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"claude-code","version":"1"}}}`)
	a.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	waitFileLine(t, logFile, "shared server listening on")
	for id := 2; id < 302; id++ {
		a.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
	}
	a.send(t, `{"jsonrpc":"2.0","id":302,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"the stalled host","scope":["docs"]}}}`)
	waitFileLine(t, statePath(dir), "the stalled host") // every request read: stdout is full
	editReviewPrompt(t, dir, "5. Is the README still true?\n")
	waitFileLine(t, logFile, "layer rebuilt")
	return dir, logFile, a
}

// A leaseholder whose host stopped reading its stdout dies of SIGTERM and
// removes its lease: a stop never waits on stdout.
func TestALeaseholderWhoseHostStopsReadingDiesOfSIGTERM(t *testing.T) {
	dir, _, a := stalledLeaseholder(t)
	a.diesOfSIGTERM(t)
	if _, err := os.Lstat(leasePath(dir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the lease is left: %v", err)
	}
}

// A leaseholder whose host stopped reading its stdout hands its client
// over when its lease is lost, to the server it starts again; when the
// host reads again, that session is the one served and notified.
func TestAStalledLeaseholderHandsItsClientOverAndServesItWhenRead(t *testing.T) {
	t.Parallel()
	dir, logFile, a := stalledLeaseholder(t)
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFileLine(t, logFile, "took over as the shared server")
	stdout := a.stdout.read()
	for id := 1; id <= 302; id++ {
		stdout.wait(t, fmt.Sprintf(`"id":%d,"result"`, id))
	}
	a.send(t, `{"jsonrpc":"2.0","id":303,"method":"tools/list"}`)
	stdout.wait(t, `"id":303,"result"`)
	changes := func(lines []string) (n int) {
		for _, l := range lines {
			n += strings.Count(l, `"method":"notifications/resources/list_changed"`)
		}
		return n
	}
	var before int
	stdout.waitUntil(t, "the lines so far", func(lines []string) bool { before = changes(lines); return true })
	editReviewPrompt(t, dir, "6. And the CHANGELOG?\n")
	stdout.waitUntil(t, "a list_changed after the edit", func(lines []string) bool { return changes(lines) > before })
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// unreadProcess is majordomus-mcp spawned by a host that writes its stdin
// and does not read its stdout and stderr until told to.
type unreadProcess struct {
	cmd            *exec.Cmd
	stdin          *os.File
	stdout, stderr *unreadPipe
}

// startUnread spawns majordomus-mcp in dir with pipes for stdio whose
// reading ends nobody reads.
func startUnread(t *testing.T, dir string, args ...string) *unreadProcess {
	t.Helper()
	trackSources()
	inR, inW := pipe(t)
	outR, outW := pipe(t)
	errR, errW := pipe(t)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close() // the child's now
	outW.Close()
	errW.Close()
	p := &unreadProcess{cmd: cmd, stdin: inW, stdout: &unreadPipe{f: outR}, stderr: &unreadPipe{f: errR}}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		inW.Close()
		outR.Close()
		errR.Close()
	})
	return p
}

func pipe(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// diesOfSIGTERM sends p SIGTERM and waits for it to die of it.
func (p *unreadProcess) diesOfSIGTERM(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	died := make(chan error, 1)
	go func() { died <- p.cmd.Wait() }()
	select {
	case err := <-died:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Fatalf("ended with %v, want death by SIGTERM", err)
		}
	case <-ctx(t).Done():
		t.Fatal("still running after SIGTERM")
	}
}

// send writes one line to the process's stdin.
func (p *unreadProcess) send(t *testing.T, line string) {
	t.Helper()
	if _, err := p.stdin.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}

// unreadPipe is the reading end of a pipe, unread until read is called.
type unreadPipe struct {
	f     *os.File
	once  sync.Once
	lines *lineLog
}

// read starts reading the pipe, line by line.
func (u *unreadPipe) read() *lineLog {
	u.once.Do(func() {
		u.lines = &lineLog{changed: make(chan struct{})}
		go func() {
			sc := bufio.NewScanner(u.f)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				u.lines.add(sc.Text())
			}
		}()
	})
	return u.lines
}

// lineLog is the lines read so far from a pipe.
type lineLog struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced on every line
}

func (l *lineLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
}

// wait waits for a line that contains part and returns it.
func (l *lineLog) wait(t *testing.T, part string) string {
	t.Helper()
	var found string
	l.waitUntil(t, fmt.Sprintf("a line with %q", part), func(lines []string) bool {
		i := slices.IndexFunc(lines, func(line string) bool { return strings.Contains(line, part) })
		if i >= 0 {
			found = lines[i]
		}
		return i >= 0
	})
	return found
}

// waitUntil waits until ok holds of the lines read so far.
func (l *lineLog) waitUntil(t *testing.T, what string, ok func(lines []string) bool) {
	t.Helper()
	c := ctx(t)
	for {
		l.mu.Lock()
		changed, done := l.changed, ok(l.lines)
		l.mu.Unlock()
		if done {
			return
		}
		select {
		case <-changed:
		case <-c.Done():
			t.Fatalf("waiting for %s", what)
		}
	}
}

// all is every line read so far.
func (l *lineLog) all() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([][]byte, len(l.lines))
	for i, line := range l.lines {
		out[i] = []byte(line)
	}
	return out
}

// waitFileLine waits until a line of the file at path contains part, and
// returns it. The file is read again every few milliseconds: a log file
// says nothing when it grows.
func waitFileLine(t *testing.T, path, part string) string {
	t.Helper()
	c := ctx(t)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		data, _ := os.ReadFile(path)
		for line := range strings.Lines(string(data)) {
			if strings.Contains(line, part) {
				return strings.TrimSpace(line)
			}
		}
		select {
		case <-tick.C:
		case <-c.Done():
			t.Fatalf("waiting for a line with %q in %s: %v", part, path, context.Cause(c))
		}
	}
}
