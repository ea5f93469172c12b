package scenarios

// Whatever the lease file holds, the next client gets a server (R1), or is
// served alone with the reason logged when the lease cannot be used (R2).

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// S3: a stale lease (its owner dead, its port unbound) is taken over, and
// the log names the class and the path.
func TestAStaleLeaseIsTakenOver(t *testing.T) {
	dir := checkout(t)
	port := freePort(t)
	plantLease(t, dir, fmt.Sprintf(`{"schema":"majordomus-mcp-lease/v1","pid":%d,"instance":"old","root":%q,"url":"http://127.0.0.1:%d","started_at":"2026-01-01T00:00:00Z"}`,
		deadPID(t), dir, port), time.Minute)
	p := shared(t, dir)
	line, err := p.WaitLog(ctx(t), "stale lease", "taking it over")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(line, "server.json") || !strings.Contains(line, fmt.Sprintf("127.0.0.1:%d", port)) || !strings.Contains(line, `"class":"stale"`) {
		t.Fatalf("the take-over line: %s", line)
	}
	url := serverURL(t, p)
	if lease := readLease(t, dir); lease["url"] != url || lease["instance"] == "old" {
		t.Fatalf("the lease after the take-over: %v", lease)
	}
	initialize(t, p, "claude-code")
	p.CloseStdin()
	exitsWith(t, p, 0)
	noLease(t, dir)
}

// S4: every unusable lease is taken over at once, and the log says which
// class it was.
func TestUnusableLeasesAreTakenOver(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		age   time.Duration
		class string
		says  string
	}{
		{"corrupt", `{not a lease`, 0, "corrupt", "not JSON"},
		{"another schema", `{"schema":"something/v9","url":"http://127.0.0.1:1"}`, 0, "corrupt", "not a majordomus-mcp-lease/v1 document"},
		// An empty file is never waited for, however new
		// (docs/design.md#judging-a-lease).
		{"an empty file, just written", ``, 0, "empty", "the file holds nothing"},
		{"whitespace, just written", " \n\t", 0, "empty", "the file holds nothing"},
		// Aged from its started_at, never from the file's mtime: touched
		// just now, it is still an hour old, though its owner (the test)
		// is alive.
		{"abandoned an hour ago, touched just now", fmt.Sprintf(`{"schema":"majordomus-mcp-lease/v1","pid":%d,"process_start":%d,"boot_id":%q,"instance":"x","url":null,"started_at":%q}`,
			os.Getpid(), processStart(t), bootID(t), time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)), 0, "abandoned", "never published a URL (started 1h0m"},
		{"abandoned by a dead owner, young", fmt.Sprintf(`{"schema":"majordomus-mcp-lease/v1","pid":%d,"instance":"x","url":null}`, deadPID(t)), 0, "abandoned", "is gone"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := checkout(t)
			plantLease(t, dir, tc.raw, tc.age)
			started := time.Now()
			p := shared(t, dir)
			line, err := p.WaitLog(ctx(t), tc.class+" lease", "taking it over")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(line, tc.says) || !strings.Contains(line, "server.json") {
				t.Fatalf("the take-over line: %s", line)
			}
			url := serverURL(t, p)
			if time.Since(started) > 10*time.Second {
				t.Errorf("the take-over waited %s: an unusable lease is never waited for", time.Since(started))
			}
			if readLease(t, dir)["url"] != url {
				t.Fatalf("the lease does not name the new server")
			}
			if inst := initialize(t, p, "codex"); !strings.Contains(inst, url) {
				t.Fatalf("instructions without the URL:\n%s", inst)
			}
			p.CloseStdin()
			exitsWith(t, p, 0)
			noLease(t, dir)
		})
	}
}

// S4: a symbolic link at the lease path is never followed: the link itself
// is taken over, and its target is left alone.
func TestASymlinkedLeaseIsTakenOverWithoutTouchingItsTarget(t *testing.T) {
	dir := checkout(t)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte("precious"), 0o600)
	os.MkdirAll(filepath.Dir(leasePath(dir)), 0o700)
	if err := os.Symlink(target, leasePath(dir)); err != nil {
		t.Fatal(err)
	}
	p := shared(t, dir)
	if _, err := p.WaitLog(ctx(t), "corrupt lease", "symbolic link", "taking it over"); err != nil {
		t.Fatal(err)
	}
	serverURL(t, p)
	if b, _ := os.ReadFile(target); string(b) != "precious" {
		t.Fatalf("the link's target was changed: %q", b)
	}
}

// S4: a lease being bound by a live owner is waited for, and attached to
// when its URL appears.
func TestABindingLeaseIsWaitedForThenAttached(t *testing.T) {
	dir := checkout(t)
	root, _ := filepath.EvalSymlinks(dir)
	sum := sha256.Sum256([]byte(root))
	repositoryID := hex.EncodeToString(sum[:])[:32]
	// The test process plays the owner: alive, started when it started, on
	// this boot, holding the lease's secret.
	key := secret.New()
	doc := map[string]any{
		"schema": "majordomus-mcp-lease/v1", "pid": os.Getpid(), "instance": "test-owner", "root": root,
		"repository_id": repositoryID, "url": nil, "boot_id": bootID(t), "process_start": processStart(t),
		"secret": key, "started_at": time.Now().UTC().Format(time.RFC3339Nano),
	}
	raw, _ := json.Marshal(doc)
	plantLease(t, dir, string(raw), time.Hour) // the file's age counts for nothing

	p := shared(t, dir, "--log-level", "debug")
	// The wait is said at info, once: for whom, whose process, until when.
	waiting := fmt.Sprintf("waiting for the lease's owner (pid %d) to publish its server's URL, until ", os.Getpid())
	line, err := p.WaitLog(ctx(t), `"level":"info"`, waiting, "then the lease is taken over")
	if err != nil {
		t.Fatal(err)
	}
	var entry struct {
		Owner int    `json:"owner_pid"`
		Until string `json:"until"`
	}
	if json.Unmarshal([]byte(line), &entry) != nil || entry.Owner != os.Getpid() || entry.Until == "" {
		t.Fatalf("the wait's line lacks the owner or the deadline: %s", line)
	}
	// The owner binds: a server answering the probe for this checkout and instance.
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"name": "majordomus", "repository_id": repositoryID, "instance": "test-owner", "leaseholder": true,
			"proof": secret.Proof(key, r.URL.Query().Get("challenge"), true)})
	}))
	defer owner.Close()
	doc["url"] = owner.URL
	raw, _ = json.Marshal(doc)
	tmp := leasePath(dir) + ".tmp"
	os.WriteFile(tmp, raw, 0o600)
	os.Rename(tmp, leasePath(dir))

	attached(t, p, owner.URL)
	if p.CountLogs("taking it over") != 0 {
		t.Fatal("a binding lease with a live owner was taken over")
	}
	if n := p.CountLogs(waiting); n != 1 {
		t.Fatalf("the wait was said %d times, want once", n)
	}
}

// S5: a lease written by a server started from this executable's path,
// since replaced on disk, is taken over; the old server loses its lease,
// hands its client over to the new server at once (convergence) and,
// serving no other session, stops.
func TestASupersededLeaseIsTakenOver(t *testing.T) {
	dir := checkout(t)
	exe := binaryCopy(t)
	old := startBinary(t, exe, dir, "--http-port", "0")
	initialize(t, old, "claude-code")
	oldURL := serverURL(t, old)

	rebuild(t, exe)
	fresh := startBinary(t, exe, dir, "--http-port", "0")
	if _, err := fresh.WaitLog(ctx(t), "superseded lease", "has been replaced since", "taking it over"); err != nil {
		t.Fatal(err)
	}
	newURL := serverURL(t, fresh)
	if newURL == oldURL || readLease(t, dir)["url"] != newURL {
		t.Fatalf("the lease does not name the new server")
	}
	for _, says := range [][]string{{"the lease is no longer this server's"}, {"handing this client over"}, {"shared server stopped"}, {"re-attached to the shared server", newURL}} {
		if _, err := old.WaitLog(ctx(t), says...); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := old.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}); err != nil || r.Error != nil {
		t.Fatalf("the handed-over client: %v %v", err, r.Error)
	}
}

// Processes started from a file replaced since are as old as each other:
// when their leaseholder leaves, one takes the lease and the other attaches
// to it, and neither takes it from the other as superseded.
func TestProcessesOfAReplacedExecutableKeepOneLeaseholder(t *testing.T) {
	dir := checkout(t)
	exe := binaryCopy(t)
	a := startBinary(t, exe, dir, "--http-port", "0")
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	var rest []*mcpclient.Process
	for _, name := range []string{"gemini-cli", "codex"} {
		p := startBinary(t, exe, dir, "--http-port", "0")
		initialize(t, p, name)
		attached(t, p, url)
		rest = append(rest, p)
	}
	rebuild(t, exe)
	a.Signal(syscall.SIGTERM)
	tookOver := 0
	for _, p := range rest {
		line, err := p.WaitLogAny(ctx(t), "took over as the shared server", "re-attached to the shared server")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "took over") {
			tookOver++
		}
		if r, err := p.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_repository", "arguments": map[string]any{}}); err != nil || r.Error != nil {
			t.Fatalf("a client after the leaseholder left: %v %v", err, r.Error)
		}
	}
	for _, p := range rest {
		if n := p.CountLogs("superseded lease"); tookOver != 1 || n != 0 {
			t.Fatalf("%d took the lease over, and one judged the other's lease superseded %d times:\n%s", tookOver, n, strings.Join(p.Logs(), "\n"))
		}
	}
}

// binaryCopy is a copy of the binary under test, which a test may rebuild.
func binaryCopy(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "majordomus-mcp")
	data, err := os.ReadFile(bin)
	if err == nil {
		err = os.WriteFile(exe, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// rebuild makes exe a "rebuilt" file: the same path, another mtime.
func rebuild(t *testing.T, exe string) {
	t.Helper()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(exe, later, later); err != nil {
		t.Fatal(err)
	}
}

// bootID is this machine's boot id.
func bootID(t *testing.T) string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// processStart is this process's start time in clock ticks (/proc field 22).
func processStart(t *testing.T) uint64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var start uint64
	fmt.Sscan(fields[19], &start) // field 22 of the whole line
	return start
}

// A lease taken away with a directory on its way (.ai/local moved out of
// the checkout while its leaseholder serves) is lost at once, not at the
// leaseholder's read of its lease once a minute: it hands its client over
// and, finding no lease, serves again under a new one at the path, which
// the next client attaches to. Before, that client made a second
// leaseholder for up to a minute.
func TestALeaseMovedAwayWithItsDirectoryIsLostAtOnce(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	if err := os.Rename(filepath.Join(dir, ".ai", "local"), filepath.Join(t.TempDir(), "local")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	line, err := a.WaitLog(ctx(t), "took over as the shared server")
	if err != nil {
		t.Fatal(err)
	}
	b := shared(t, dir)
	initialize(t, b, "codex")
	attached(t, b, fieldOf(t, line, "url"))
}

// A server that loses its lease says so to every session it serves
// (docs/design.md#convergence, README "Where the log goes"), before it ends
// their streams and hands its own client over: its own client, over stdio,
// and a client speaking HTTP directly, on its GET stream, each get the
// notifications/message, which the log's warning says too.
func TestALostLeaseIsToldToEverySessionOfTheServer(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	c := connect(t, dir)
	sid := openPlainSession(t, c)
	headers := c.with(map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	if status, _, body := httpDo(t, http.MethodPost, c.URL, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), headers); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	req, err := http.NewRequestWithContext(ctx(t), http.MethodGet, c.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stream := bufio.NewScanner(resp.Body)
	editReviewPrompt(t, dir, "5. Is the stream open?\n") // heard on the stream: it is open
	for stream.Scan() && !strings.Contains(stream.Text(), "list_changed") {
	}
	from := len(a.Frames())

	if err := os.Rename(filepath.Join(dir, ".ai", "local"), filepath.Join(t.TempDir(), "local")); err != nil {
		t.Fatal(err)
	}
	const lost = "this server no longer holds this checkout's lease"
	var heard []string
	for stream.Scan() { // until the server ends the stream
		heard = append(heard, stream.Text())
	}
	if !strings.Contains(strings.Join(heard, "\n"), `"method":"notifications/message"`) || !strings.Contains(strings.Join(heard, "\n"), lost) {
		t.Errorf("the plain HTTP client's stream ended without saying the lease was lost: %q", heard)
	}
	if _, err := a.WaitLogAny(ctx(t), "took over as the shared server", "re-attached to the shared server"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Call(ctx(t), "ping", nil); err != nil { // after anything the hand-over wrote
		t.Fatal(err)
	}
	told := false
	for _, f := range a.Frames()[from:] {
		told = told || strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), lost)
	}
	if !told {
		t.Errorf("the server's own client was not told the lease was lost")
	}
}
