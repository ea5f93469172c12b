package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"
)

// Sessions counts what the surface serves: its sessions, and the listen
// streams of clients without one.
func TestSessionsCountsEverySessionServed(t *testing.T) {
	f := newFixture(t)
	f.connect("claude-code")
	b := f.connect("codex")
	if n := f.s.Sessions(); n != 2 {
		t.Fatalf("%d sessions", n)
	}
	b.leave()
	if n := f.s.Sessions(); n != 1 {
		t.Fatalf("%d sessions after one left", n)
	}
}

// An announcement is bounded, so that the longest one a client may make,
// under the longest client name, fits a record of the shared state: one
// too long or naming too many paths is refused, and the one before stands
// (a record left unwritten would let the state bring back the one it
// replaced after a take-over).
func TestAnAnnouncementIsBoundedToFitTheState(t *testing.T) {
	f := newFixture(t)
	var lines [][]byte
	f.s.Keep(State{}, func(line []byte) bool { lines = append(lines, line); return true })
	worst := strings.Repeat("\x01", 300) // each written \u0001 in JSON
	c := f.connect(worst)
	many := make([]any, maxScopePaths+1)
	for i := range many {
		many[i] = fmt.Sprintf("lib/%d", i)
	}
	if _, errText := c.tool("majordomus_announce", map[string]any{"intent": "lib", "scope": []any{"lib"}}); errText != "" {
		t.Fatal(errText)
	}
	for _, args := range []map[string]any{
		{"intent": strings.Repeat("x", maxStateRecord), "scope": []any{"lib"}},
		{"intent": "many", "scope": many},
	} {
		if _, errText := c.tool("majordomus_announce", args); !strings.Contains(errText, "at most") {
			t.Errorf("an announcement over its bounds was taken: %q", errText)
		}
	}
	if peers, _ := f.s.Board.Peers(); peers[0].Announcement.Intent != "lib" {
		t.Errorf("after the refusals, the board says %+v", peers[0].Announcement)
	}
	// the longest taken: escaped six times over in JSON, nearly to its bound
	longest := "x" + strings.Repeat("\x01", (maxAnnouncementBytes-2000)/6-1) // not blank: it shows an x
	if _, errText := c.tool("majordomus_announce", map[string]any{"intent": longest, "scope": many[:maxScopePaths]}); errText != "" {
		t.Fatal(errText)
	}
	last := lines[len(lines)-2] // its peer record, then its execution's
	if !strings.HasPrefix(string(last), `{"peer"`) || len(last) > maxStateRecord {
		t.Fatalf("the longest announcement's record: %d bytes, %.40s", len(last), last)
	}
}

// A session carried with its announcement is recorded in the checkout's
// state under the client its initialize names, not as not initialized: a
// server killed before the peer announces again leaves it so to the next.
func TestACarriedSessionIsRecordedUnderItsClient(t *testing.T) {
	f, _ := carrying(t)
	var last Peer
	f.s.Keep(State{}, func(line []byte) bool {
		var r struct{ Peer *Peer }
		if json.Unmarshal(line, &r) == nil && r.Peer != nil {
			last = *r.Peer
		}
		return true
	})
	sess := server.NewInProcessSession("http-like", nil)
	msg := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"codex"}}}`
	f.s.MCP.HandleMessage(f.s.MCP.WithContext(carriedContext("p9", `{"intent":"the docs","scope":["doc"]}`), sess), json.RawMessage(msg))
	if last.ID != "p9" || last.Client.Name != "codex" || last.Announcement == nil {
		t.Fatalf("the state's last record of a peer: %+v", last)
	}
}

// ownSession is a session that says it is the process's own client's, as
// transport/stdio's does.
type ownSession struct{ *server.InProcessSession }

func (ownSession) Transport() string { return "stdio" }

// Once the history is not kept (the lease lost), the calls of the
// server's sessions are not the checkout's, but its own client's are: that
// client is carried to the current server, or served alone, and its calls
// wait to join the history.
func TestAfterALostLeaseOnlyTheOwnClientsCallsWait(t *testing.T) {
	f := newFixture(t)
	f.s.Keep(State{}, func([]byte) bool { return true })
	own := ownSession{server.NewInProcessSession("stdio", nil)}
	if err := f.s.MCP.RegisterSession(context.Background(), own); err != nil {
		t.Fatal(err)
	}
	other := f.connect("codex")
	f.s.Unkeep()
	if _, _, msg := f.handle(context.Background(), own, "tools/call", map[string]any{"name": "majordomus_list"}); msg != "" {
		t.Fatal(msg)
	}
	other.tool("majordomus_repository", nil)
	var waiting []Execution
	raw, _ := f.s.Executions.Unshared()
	if err := json.Unmarshal(raw, &waiting); err != nil || len(waiting) != 1 || waiting[0].Tool != "majordomus_list" || waiting[0].Peer != "p1" {
		t.Fatalf("the calls waiting after the loss: %+v (%v); want the own client's alone", waiting, err)
	}
}
