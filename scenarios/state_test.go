package scenarios

// The checkout's shared state (docs/design.md#nothing-is-lost): the
// execution history, the departed announcers and the peer counter outlive
// every process, in the lease directory, and what cannot be read there is
// set aside and never keeps anyone from sharing.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// statePath is the checkout's shared state beside the default lease.
func statePath(dir string) string { return leasePath(dir) + ".state" }

// execution is one entry of majordomus_executions, its time as written.
type execution struct {
	Tool       string  `json:"tool"`
	Peer       string  `json:"peer"`
	At         string  `json:"at"`
	DurationMS float64 `json:"duration_ms"`
	OK         bool    `json:"ok"`
}

func executionsOf(t *testing.T, p *mcpclient.Process) []execution {
	t.Helper()
	var out struct{ Executions []execution }
	if isErr, text, err := p.CallTool(ctx(t), "majordomus_executions", map[string]any{"limit": 1000}, &out); err != nil || isErr {
		t.Fatalf("majordomus_executions: %s %v", text, err)
	}
	return out.Executions
}

// call makes a tool call that must succeed.
func call(t *testing.T, p *mcpclient.Process, tool string, args map[string]any) {
	t.Helper()
	if isErr, text, err := p.CallTool(ctx(t), tool, args, nil); err != nil || isErr {
		t.Fatalf("%s: %s %v", tool, text, err)
	}
}

// peerCounter is the checkout's counter of peer numbers.
func peerCounter(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(leasePath(dir) + ".peers")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("the peer counter holds %q", raw)
	}
	return n
}

// peerOf is the id the board gives p's client.
func peerOf(t *testing.T, p *mcpclient.Process) string {
	t.Helper()
	return peersOf(t, p).Caller
}

// The leaseholder A is killed -9 with bridged clients B and D attached and
// C gone: one of B and D takes over, the other re-attaches, and every call made
// before the kill is in the history with its peer and its time, C's
// departed announcement is on the board, and replaying the carried
// announcements made no execution, drew no peer number and logged no
// other id. A client started afterwards gets a number never used.
func TestTheHistoryAndBoardOutliveAKilledLeaseholder(t *testing.T) {
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	d := bridged(t, dir, "cursor")
	bID, cID, dID := peerOf(t, b), peerOf(t, c), peerOf(t, d)

	call(t, b, "majordomus_list", nil)
	call(t, b, "majordomus_repository", nil)
	call(t, b, "majordomus_announce", map[string]any{"intent": "the parser", "scope": []string{"lib"}})
	call(t, d, "majordomus_announce", map[string]any{"intent": "the tests", "scope": []string{"test"}})
	call(t, c, "majordomus_announce", map[string]any{"intent": "the docs", "scope": []string{"doc"}})
	c.CloseStdin() // C leaves: its announcement is a departed one
	exitsWith(t, c, 0)
	if _, err := a.WaitLog(ctx(t), `"msg":"session closed"`, `"peer":"`+cID+`"`); err != nil {
		t.Fatal(err)
	}
	call(t, a, "majordomus_search", map[string]any{"query": "rule"})
	before := executionsOf(t, a)
	if len(before) < 8 {
		t.Fatalf("the history before the kill: %+v", before)
	}
	counter := peerCounter(t, dir)

	// The state is the lease's kind of file: this user's, 0600, and
	// never holds the secret.
	info, err := os.Lstat(statePath(dir))
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
		t.Fatalf("the shared state: %v %v", info, err)
	}
	raw, _ := os.ReadFile(statePath(dir))
	if key, _ := readLease(t, dir)["secret"].(string); key == "" || strings.Contains(string(raw), key) {
		t.Fatal("the shared state holds the lease's secret, or the lease has none")
	}

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))

	// B and D learn at once: one takes over, the other re-attaches.
	holder := oneTakesOver(t, b, d)
	after := executionsOf(t, holder)
	lost := func(after []execution) []execution {
		var missing []execution
		for _, e := range before {
			if !slices.Contains(after, e) {
				missing = append(missing, e)
			}
		}
		return missing
	}
	if missing := lost(after); len(missing) > 0 {
		t.Fatalf("the history after the take-over lost %+v\nof %+v\nit is %+v", missing, before, after)
	}
	board := peersOf(t, d)
	if board.Caller != dID {
		t.Fatalf("D was %s and is %s", dID, board.Caller)
	}

	// A new client gets the next number: the take-over and the re-attach
	// drew none.
	if got := peerCounter(t, dir); got != counter {
		t.Fatalf("the peer counter went from %d to %d over a take-over and a re-attach", counter, got)
	}
	c2 := bridged(t, dir, "gemini-cli")
	if id := peerOf(t, c2); id != "p"+strconv.Itoa(counter+1) {
		t.Fatalf("a client started after the take-over is %s; the counter stood at %d", id, counter)
	}
	if missing := lost(executionsOf(t, c2)); len(missing) > 0 {
		t.Fatalf("the history a new client sees lost %+v", missing)
	}

	board = peersOf(t, c2)
	announced := map[string]string{}
	for _, p := range board.Peers {
		if p.Announcement != nil {
			announced[p.ID] = p.Announcement.Intent + " " + strconv.FormatBool(p.Attached)
		}
	}
	if announced[cID] != "the docs false" || announced[bID] != "the parser true" || announced[dID] != "the tests true" || board.Departed != 1 || board.Count != 3 {
		t.Fatalf("the board after the take-over: %+v", board)
	}

	// The replays were bookkeeping: no announcement after the kill is an
	// execution, and every session the new server opened named its id.
	var announces int
	for _, e := range executionsOf(t, c2) {
		if e.Tool == "majordomus_announce" {
			announces++
		}
	}
	if announces != 3 {
		t.Fatalf("%d announcements in the history; 3 were made", announces)
	}
	for _, id := range []string{bID, dID} { // each carried peer on the board with its announcement at once
		if _, err := holder.WaitLog(ctx(t), `"msg":"session opened"`, `"peer":"`+id+`"`, `"announced":true`); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range holder.Logs() {
		if strings.Contains(line, `"msg":"session opened"`) && !strings.Contains(line, `"peer":"`+bID+`"`) &&
			!strings.Contains(line, `"peer":"`+dID+`"`) && !strings.Contains(line, `"peer":"p`+strconv.Itoa(counter+1)+`"`) {
			t.Errorf("the new server opened a session under another id: %s", line)
		}
		if strings.Contains(line, "a claimed peer id was not granted") {
			t.Errorf("%s", line)
		}
	}
}

// unreadableStates plant what is not a state at a path (and a named pipe
// where there are named pipes: state_unix_test.go).
var unreadableStates = map[string]func(path string) error{
	"garbage":   func(p string) error { return os.WriteFile(p, []byte("\x00not a state\n{{{\n"), 0o600) },
	"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	"another schema": func(p string) error {
		return os.WriteFile(p, []byte(`{"schema":"majordomus-mcp-state/v9"}`+"\n"), 0o600)
	},
}

// Garbage, a directory or a named pipe where the shared state should be:
// the first client leads, the next shares its server, the log says what
// was found and that it was set aside, and a fresh state is written and
// kept.
func TestUnreadableSharedStateIsSetAsideAndSharingGoesOn(t *testing.T) {
	for name, plant := range unreadableStates {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			if err := os.MkdirAll(filepath.Dir(statePath(dir)), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := plant(statePath(dir)); err != nil {
				t.Fatal(err)
			}
			a := shared(t, dir)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			line, err := a.WaitLog(ctx(t), "the checkout's shared state at", "set aside as")
			if err != nil {
				t.Fatal(err)
			}
			var entry struct {
				Level, Reason string
				SetAside      string `json:"set_aside"`
			}
			if json.Unmarshal([]byte(line), &entry) != nil || entry.Level != "warn" || entry.Reason == "" || entry.SetAside == "" {
				t.Fatalf("the warning: %s", line)
			}
			aside, err := os.Lstat(entry.SetAside)
			if err != nil || filepath.Dir(entry.SetAside) != filepath.Dir(statePath(dir)) {
				t.Fatalf("what was found is not where the warning says: %v", err)
			}
			if (name == "directory") != aside.IsDir() || (name == "fifo") != (aside.Mode()&os.ModeNamedPipe != 0) {
				t.Fatalf("set aside as %s: %v", entry.SetAside, aside.Mode())
			}
			b := bridged(t, dir, "codex")
			if _, err := b.WaitLog(ctx(t), "bridging this stdio session"); err != nil {
				t.Fatal(err)
			}
			call(t, b, "majordomus_list", nil)
			if board := peersOf(t, a); board.Count != 2 {
				t.Fatalf("not one board: %+v", board)
			}
			fresh, err := os.ReadFile(statePath(dir))
			if err != nil || !strings.HasPrefix(string(fresh), `{"schema":"majordomus-mcp-state/v1"}`+"\n") || !strings.Contains(string(fresh), `"tool":"majordomus_list"`) {
				t.Fatalf("the fresh state: %q %v", fresh, err)
			}
		})
	}
}

// A peer counter that cannot be used (here a directory where its file
// should be) is said, once: the server numbers its peers itself, and may
// give an id given before. (Numbering began again at p1 without a word.)
func TestAnUnusablePeerCounterIsSaid(t *testing.T) {
	dir := checkout(t)
	if err := os.MkdirAll(leasePath(dir)+".peers", 0o700); err != nil {
		t.Fatal(err)
	}
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	if _, err := a.WaitLog(ctx(t), "the checkout's peer counter cannot be used", ".peers"); err != nil {
		t.Fatal(err)
	}
	b := shared(t, dir)
	initialize(t, b, "codex")
	call(t, b, "majordomus_peers", nil)
	if n := a.CountLogs("the checkout's peer counter cannot be used"); n != 1 {
		t.Errorf("the leaseholder said it %d times, want once", n)
	}
}
