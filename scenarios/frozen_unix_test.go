//go:build unix

package scenarios

import (
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// quickBeats are the timings the frozen-leaseholder scenarios run under:
// a heartbeat, and a grace that a frozen server outlasts, in seconds.
var quickBeats = []string{"--heartbeat", "300ms", "--busy-grace", "2s", "--probe-timeout", "500ms"}

// A frozen leaseholder is replaced before anyone asks
// (docs/design.md#sharing-heals): its two bridges are idle, their
// heartbeats find it silent, and one of them takes it over once the busy
// grace has passed, with no client speaking; a call made after is answered
// there. (One that is only slow is kept:
// TestASlowLeaseholderIsNeverReplaced.)
func TestAFrozenLeaseholderIsReplacedBeforeAnyoneAsks(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, quickBeats...)
	initialize(t, a, "claude-code")
	before := serverURL(t, a)
	b := bridged(t, dir, "codex", quickBeats...)
	c := bridged(t, dir, "gemini-cli", quickBeats...)
	stop(t, a)
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })

	took := oneTakesOver(t, b, c)
	after := serverURL(t, took)
	if after == before {
		t.Fatalf("the frozen server's URL %s is still the one served", before)
	}
	if _, err := took.WaitLog(ctx(t), "the shared server is gone; electing now, before the client's next message"); err != nil {
		t.Fatal(err)
	}
	other := b
	if took == b {
		other = c
	}
	if _, err := other.WaitLog(ctx(t), "re-attached to the shared server", after); err != nil {
		t.Fatal(err)
	}
	if board := peersOf(t, other); board.Caller == "" {
		t.Fatalf("a call after the take-over was not answered by a board: %+v", board)
	}
}

// A leaseholder that is only slow is never replaced: stopped until its idle
// bridge's heartbeat gives up on it, which leaves the election's own probe
// to complete the busy grace, and continued then, it answers that probe
// within the grace; the bridge attaches to it again, the lease still names
// it, and a call is answered there (docs/design.md#sharing-heals). Its
// client is not told that its server no longer serves the checkout: it
// does, and serves it still.
func TestASlowLeaseholderIsNeverReplaced(t *testing.T) {
	t.Parallel()
	slow := []string{"--heartbeat", "300ms", "--busy-grace", "8s", "--probe-timeout", "4s"}
	dir := checkout(t)
	a := shared(t, dir, slow...)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	b := bridged(t, dir, "codex", slow...)
	from := len(b.Frames())
	stop(t, a)
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })

	if _, err := b.WaitLog(ctx(t), "the shared server is gone; electing now, before the client's next message"); err != nil {
		t.Fatal(err)
	}
	if err := a.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitLog(ctx(t), "re-attached to the shared server", url); err != nil {
		t.Fatal(err)
	}
	if board := peersOf(t, b); board.Caller == "" {
		t.Fatalf("a call after the slow spell was not answered by a board: %+v", board)
	}
	if readLease(t, dir)["url"] != url || b.CountLogs("taking it over") != 0 {
		t.Fatalf("the slow leaseholder was replaced:\n%s", strings.Join(b.Logs(), "\n"))
	}
	// What the client is told of the re-attachment comes before the lists
	// it is told may have changed (notices are written in order).
	if _, err := b.WaitFrameAfter(ctx(t), "the list_changed of the re-attachment", from, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Frames()[from:] {
		if strings.Contains(string(f), "no longer serves the checkout") {
			t.Fatalf("the client of a slow leaseholder that still serves it was told it moved: %s", f)
		}
	}
}

// A bridge whose heartbeat has not come yet when its frozen leaseholder is
// replaced does not wait on the frozen server at its next call: the lease
// names another server, and the bridge moves there before sending
// (docs/design.md#convergence). C's own heartbeat and probes would take
// minutes; its call is answered by the server B's heartbeat put in place.
func TestABridgeOfAReplacedFrozenLeaseholderMovesAtItsNextCall(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, quickBeats...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex", quickBeats...)
	c := bridged(t, dir, "gemini-cli", "--heartbeat", "60s", "--busy-grace", "5m", "--election-bound", "10m")
	stop(t, a)
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })

	if _, err := b.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	after := serverURL(t, b)
	if board := peersOf(t, c); board.Caller == "" {
		t.Fatalf("C's call after the take-over was not answered by a board: %+v", board)
	}
	if _, err := c.WaitLog(ctx(t), "the lease names another server now; this session moves to it"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLog(ctx(t), "re-attached to the shared server", after); err != nil {
		t.Fatal(err)
	}
}

// Bridges of 2026-07-28 clients notice a frozen leaseholder too, with no
// client speaking: they have no session to ping, so their heartbeats probe
// the server. One takes it over; the other moves there and holds its
// client's presence there, under the same peer id: both clients stay on
// the board (docs/design.md#nothing-is-lost).
func TestAFrozenLeaseholderOfModernClientsIsReplacedBeforeAnyoneAsks(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, quickBeats...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b, c := modernBridged(t, dir, quickBeats...), modernBridged(t, dir, quickBeats...)
	peers := map[*mcpclient.Process]string{b: modernCaller(t, b), c: modernCaller(t, c)}
	stop(t, a)
	t.Cleanup(func() { a.Signal(syscall.SIGCONT) })

	took := oneTakesOver(t, b, c)
	other := b
	if took == b {
		other = c
	}
	if err := other.WaitLogs(ctx(t), 2, "presence open"); err != nil {
		t.Fatal(err)
	}
	board := modernBoard(t, took)
	for _, p := range board.Peers {
		if p.ID == peers[other] && p.Attached && board.Caller == peers[took] {
			return
		}
	}
	t.Fatalf("after the take-over, %s's board lacks %s attached: %+v", peers[took], peers[other], board)
}
