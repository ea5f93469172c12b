package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// leasePath is the default profile's lease in a checkout.
func leasePath(dir string) string { return filepath.Join(dir, ".ai/local/state/mcp/server.json") }

// shared starts a client of the shared server: any free port, short
// timings where a scenario waits on them.
func shared(t *testing.T, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	return start(t, dir, append([]string{"--http-port", "0"}, args...)...)
}

// logField waits for a log line whose message contains msg and returns the
// string value of one of its fields.
func logField(t *testing.T, p *mcpclient.Process, msg, field string) string {
	t.Helper()
	line, err := p.WaitLog(ctx(t), msg)
	if err != nil {
		t.Fatal(err)
	}
	return fieldOf(t, line, field)
}

// fieldOf returns the string value of a field of a JSON log line.
func fieldOf(t *testing.T, line, field string) string {
	t.Helper()
	var entry map[string]any
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		t.Fatalf("a log line that is not JSON: %s", line)
	}
	v, _ := entry[field].(string)
	if v == "" {
		t.Fatalf("the log line has no %s: %s", field, line)
	}
	return v
}

// servedAlone begins the line a process logs when sharing failed and it
// serves its client alone (docs/design.md#serving-alone).
const servedAlone = "cannot use the shared server"

// waitShared waits for a log line with every one of parts from a process
// that is to share (serve the checkout or attach to its server), and fails
// at once, with the reason it logged, if it is served alone instead, or
// exits: a server that never comes is not waited for. A scenario in which
// a client is to join after it was served alone waits with p.WaitLog.
func waitShared(t *testing.T, p *mcpclient.Process, parts ...string) string {
	t.Helper()
	line, err := p.WaitLogUnless(ctx(t), servedAlone, parts...)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// serverURL waits for the process to say it serves, and returns its URL.
func serverURL(t *testing.T, p *mcpclient.Process) string {
	t.Helper()
	return fieldOf(t, waitShared(t, p, "shared server listening on"), "url")
}

// attached waits for the process to bridge its client to the shared
// server (whose URL may be among parts).
func attached(t *testing.T, p *mcpclient.Process, parts ...string) {
	t.Helper()
	waitShared(t, p, append([]string{"bridging this stdio session"}, parts...)...)
}

// readLease returns the lease file's document, failing if there is none.
func readLease(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(leasePath(dir))
	if err != nil {
		t.Fatalf("reading the lease: %v", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the lease is not JSON: %q", raw)
	}
	return doc
}

// noLease fails if a lease file exists.
func noLease(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Lstat(leasePath(dir)); !os.IsNotExist(err) {
		t.Fatalf("a lease is left at %s (%v)", leasePath(dir), err)
	}
}

// plantLease writes raw at the lease path and backdates it by age.
func plantLease(t *testing.T, dir string, raw string, age time.Duration) {
	t.Helper()
	path := leasePath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	when := time.Now().Add(-age)
	if err := os.Chtimes(path, when, when); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a port nothing listens on (bound, then closed).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	return p.Pid
}

// httpDo sends one HTTP request and returns the status, headers and body.
func httpDo(t *testing.T, method, url string, body []byte, headers map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// connection is how a direct HTTP client of this user reaches a
// checkout's server: the MCP endpoint and the header that lets it in, as
// `majordomus-mcp status` prints them (docs/security.md).
type connection struct {
	URL    string `json:"url"`
	Header string `json:"header"`
}

// connect runs `majordomus-mcp status` in dir (args: a profile), as the
// user of such a client would, and returns how to connect.
func connect(t *testing.T, dir string, args ...string) connection {
	t.Helper()
	code, stdout, stderr := runOnce(t, dir, "", append([]string{"status"}, args...)...)
	var report struct{ Connect *connection }
	if err := json.Unmarshal([]byte(stdout), &report); err != nil || code != 0 || report.Connect == nil {
		t.Fatalf("status says no way to connect: exit %d\n%s%s", code, stdout, stderr)
	}
	return *report.Connect
}

// base is the server's base URL.
func (c connection) base() string { return strings.TrimSuffix(c.URL, "/mcp") }

// with returns headers and the header that lets the client in.
func (c connection) with(headers map[string]string) map[string]string {
	name, value, _ := strings.Cut(c.Header, ": ")
	out := map[string]string{name: value}
	for k, v := range headers {
		out[k] = v
	}
	return out
}

// openPlainSession opens an HTTP session at a server, as a client speaking
// HTTP directly does, and returns its id.
func openPlainSession(t *testing.T, c connection) string {
	t.Helper()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"plain-http","version":"1"}}}`)
	status, header, answer := httpDo(t, http.MethodPost, c.URL, body, c.with(nil))
	sid := header.Get("Mcp-Session-Id")
	if status != http.StatusOK || sid == "" {
		t.Fatalf("opening a plain session: %d %s", status, answer)
	}
	return sid
}

// plainSession is a session a client speaking HTTP directly opened.
type plainSession struct {
	t    *testing.T
	c    connection
	sid  string
	next int
}

// call sends one request in the session and returns its answer, read from
// a JSON body or an event stream.
func (s *plainSession) call(method string, params any) (mcpclient.Response, error) {
	s.next++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1000 + s.next, "method": method, "params": params})
	if err != nil {
		return mcpclient.Response{}, err
	}
	status, header, answer := httpDo(s.t, http.MethodPost, s.c.URL, body,
		s.c.with(map[string]string{"Mcp-Session-Id": s.sid, "Mcp-Protocol-Version": "2025-11-25"}))
	if status != http.StatusOK {
		return mcpclient.Response{}, fmt.Errorf("%s: status %d: %s", method, status, answer)
	}
	if strings.HasPrefix(header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(answer)) {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok && strings.Contains(data, `"id":`) {
				answer = []byte(strings.TrimSpace(data))
			}
		}
	}
	var r mcpclient.Response
	err = json.Unmarshal(answer, &r)
	return r, err
}

// end ends the session (DELETE).
func (s *plainSession) end() {
	httpDo(s.t, http.MethodDelete, s.c.URL, nil, s.c.with(map[string]string{"Mcp-Session-Id": s.sid, "Mcp-Protocol-Version": "2025-11-25"}))
}

// identity is GET / of a server, as a client with its token sees it.
func identity(t *testing.T, c connection) map[string]any {
	t.Helper()
	status, _, body := httpDo(t, "GET", c.base()+"/", nil, c.with(nil))
	if status != 200 {
		t.Fatalf("GET %s/: %d %s", c.base(), status, body)
	}
	var id map[string]any
	if err := json.Unmarshal(body, &id); err != nil {
		t.Fatalf("GET /: not JSON: %s", body)
	}
	return id
}

// board reads a client's peer board.
type boardView struct {
	Count    int
	Departed int
	Caller   string
	Peers    []struct {
		ID           string
		Attached     bool
		Client       struct{ Name string }
		Transport    string
		Announcement *struct {
			Intent string
			Scope  []string
		}
	}
}

func peersOf(t *testing.T, p *mcpclient.Process) boardView {
	t.Helper()
	var b boardView
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_peers", nil, &b); err != nil || isErr {
		t.Fatalf("majordomus_peers: %s %v", text, err)
	}
	return b
}

// exitsWith waits for the process to exit with code.
func exitsWith(t *testing.T, p *mcpclient.Process, code int) {
	t.Helper()
	exit, err := p.Wait(ctx(t))
	if err != nil || exit.Code != code {
		t.Fatalf("exit %+v %v, want code %d\n%s", exit, err, code, strings.Join(p.Logs(), "\n"))
	}
}

// initialize performs the handshake and returns the instructions.
func initialize(t *testing.T, p *mcpclient.Process, client string) string {
	t.Helper()
	res, err := p.Initialize(ctx(t), client, "2025-11-25")
	if err != nil {
		t.Fatalf("initialize %s: %v\n%s", client, err, strings.Join(p.Logs(), "\n"))
	}
	return res.Instructions
}

// toldServedAlone proves a client served alone was told so, with the
// reason its process logged: in its instructions (when given; a client
// carried after a failover keeps those it had), by a notifications/message
// at warning, and in majordomus_server's findings (docs/design.md#the-layer).
func toldServedAlone(t *testing.T, p *mcpclient.Process, instructions string) {
	t.Helper()
	reason := logField(t, p, "cannot use the shared server", "reason")
	quoted := strconv.Quote(reason)
	quoted = quoted[:min(len(quoted), 60)] // the notice cuts a long reason
	const notice = "served alone, without the checkout's shared server, because sharing failed: "
	if instructions != "" && (!strings.Contains(instructions, "This session is "+notice) || !strings.Contains(instructions, quoted)) {
		t.Fatalf("the instructions do not say the client is served alone, and why (%s):\n%s", quoted, instructions)
	}
	frame, err := p.WaitFrame(ctx(t), "a notifications/message saying served alone", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), "served alone")
	})
	if err != nil {
		t.Fatal(err)
	}
	var message struct {
		Params struct{ Level, Data string }
	}
	if json.Unmarshal(frame, &message) != nil || message.Params.Level != "warning" ||
		!strings.Contains(message.Params.Data, notice) || !strings.Contains(message.Params.Data, quoted) {
		t.Fatalf("the message: %s", frame)
	}
	var report struct{ Findings []string }
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_server", nil, &report); err != nil || isErr {
		t.Fatalf("majordomus_server: %s %v", text, err)
	}
	if len(report.Findings) != 1 || !strings.Contains(report.Findings[0], notice) || !strings.Contains(report.Findings[0], quoted) {
		t.Fatalf("majordomus_server's findings: %q", report.Findings)
	}
}

// oneTakesOver waits until each of the bridges ps, whose leaseholder is
// gone, says where its client went, and returns the one that took over;
// it fails unless exactly one did and the others re-attached.
func oneTakesOver(t *testing.T, ps ...*mcpclient.Process) *mcpclient.Process {
	t.Helper()
	var holder *mcpclient.Process
	for _, p := range ps {
		line, err := p.WaitLogAny(ctx(t), "took over as the shared server", "re-attached to the shared server")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, "took over") {
			if holder != nil {
				t.Fatal("two clients took over")
			}
			holder = p
		}
	}
	if holder == nil {
		t.Fatal("no client took over")
	}
	return holder
}

// leaseholderAndTwo starts dir's leaseholder (its client claude-code)
// serving, and two clients bridged to it (codex, gemini-cli).
func leaseholderAndTwo(t *testing.T, dir string) (a, b, c *mcpclient.Process) {
	t.Helper()
	a = shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	return a, bridged(t, dir, "codex"), bridged(t, dir, "gemini-cli")
}
