package scenarios

import (
	"os"
	"syscall"
	"testing"
)

// A 2026-07-28 client need not send server/discover: one whose first
// request is its announcement, served in process by its own leaseholder,
// keeps its peer id when that server loses its lease and the client is
// carried onto whatever serves next, and no number is drawn for it.
func TestAModernClientThatNeverDiscoveredKeepsItsIDAcrossAHandOver(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	if r, err := a.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_announce",
		"arguments": map[string]any{"intent": "the parser", "scope": []string{"lib"}}}, "modern-agent")); err != nil || r.Error != nil {
		t.Fatalf("majordomus_announce: %+v %v", r.Error, err)
	}
	serverURL(t, a)
	peer := modernCaller(t, a)
	counter := peerCounter(t, dir)

	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	board := modernBoard(t, a)
	if board.Caller != peer {
		t.Errorf("the client was %s and is %s after the hand-over: %+v", peer, board.Caller, board.Peers)
	}
	for _, p := range board.Peers {
		if p.ID != board.Caller && p.Announcement != nil && p.Announcement.Intent == "the parser" {
			t.Errorf("the client's announcement is on the board twice, under %s and %s: %+v", p.ID, board.Caller, board.Peers)
		}
	}
	if got := peerCounter(t, dir); got != counter {
		t.Errorf("the peer counter went from %d to %d over the hand-over", counter, got)
	}
}

// The same client bridged keeps its id when its process takes the server
// over, and again when that server in turn loses its lease.
func TestAModernClientThatNeverDiscoveredKeepsItsIDAcrossTakeOvers(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := shared(t, dir)
	if r, err := m.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_announce",
		"arguments": map[string]any{"intent": "the parser", "scope": []string{"lib"}}}, "modern-agent")); err != nil || r.Error != nil {
		t.Fatalf("majordomus_announce: %+v %v", r.Error, err)
	}
	peer := modernCaller(t, m)
	counter := peerCounter(t, dir)

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	if _, err := m.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if got := modernCaller(t, m); got != peer {
		t.Fatalf("the client was %s and is %s after the take-over", peer, got)
	}
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitLogs(ctx(t), 2, "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if got := modernCaller(t, m); got != peer {
		t.Errorf("the client was %s and is %s after its server lost its lease", peer, got)
	}
	if got := peerCounter(t, dir); got != counter {
		t.Errorf("the peer counter went from %d to %d over the take-overs", counter, got)
	}
}
