package scenarios

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// A call a client served alone made, still running when the client joins
// the shared server (longer than the joining waits for it: here a
// majordomus_fleet_inventory whose read of the fleet registry waits out
// SQLite's busy timeout behind another process's lock), joins the
// checkout's history, in order, before its answer reaches the client.
func TestACallRunningAsItsClientJoinsJoinsTheHistoryInOrder(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	reg := madeRegistry(t)
	state := filepath.Join(dir, ".ai/local/state")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := shared(t, dir, "--registry", reg)
	initialize(t, c, "codex")
	if _, err := c.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
		t.Fatal(err)
	}
	call(t, c, "majordomus_list", nil)
	call(t, c, "majordomus_fleet_inventory", nil)

	lockRegistry(t, reg)
	slow, err := c.Send("tools/call", map[string]any{"name": "majordomus_fleet_inventory", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	d := shared(t, dir)
	initialize(t, d, "claude-code")
	serverURL(t, d)
	if _, err := c.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Await(ctx(t), slow); err != nil || r.Error != nil {
		t.Fatalf("the slow call: %v %+v", err, r.Error)
	}
	call(t, c, "majordomus_repository", nil)
	id := peersOf(t, c).Caller
	var its []string
	for _, x := range slices.Backward(executionsOf(t, d)) {
		if x.Peer == id {
			its = append(its, x.Tool)
		}
	}
	want := []string{"majordomus_list", "majordomus_fleet_inventory", "majordomus_fleet_inventory", "majordomus_repository", "majordomus_peers"}
	if !slices.Equal(its, want) {
		t.Fatalf("the shared history has %q of the client's calls, want %q", its, want)
	}
}

// A call a client served alone made, answered as the shared server it
// joins takes its earlier calls in (here while that server is stopped,
// until another client starting meanwhile finds it busy), goes before the
// call its client makes on that answer: the answer waits for the shared
// server to have the call.
func TestACallAnsweredAsItsClientJoinsGoesBeforeItsNextCall(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	reg := madeRegistry(t)
	c, usable := aloneFromTheStart(t, dir, "--registry", reg)
	const made = 900 // enough that taking them in is under way when the server stops
	for range made {
		call(t, c, "majordomus_search", map[string]any{"query": "rule"})
	}
	unlock := lockRegistry(t, reg)
	slow, err := c.Send("tools/call", map[string]any{"name": "majordomus_fleet_inventory", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	usable()
	d := shared(t, dir)
	initialize(t, d, "claude-code")
	serverURL(t, d)
	journaled(t, dir, "majordomus_search") // the server stops as the first of them is journaled
	stop(t, d)
	unlock() // the slow call ends
	type sent struct {
		id  json.RawMessage
		err error
	}
	next := make(chan sent, 1)
	go func() { // the client makes its next call on the slow call's answer
		r, err := c.Await(ctx(t), slow)
		if err == nil && r.Error != nil {
			err = fmt.Errorf("%+v", r.Error)
		}
		if err != nil {
			next <- sent{err: err}
			return
		}
		id, err := c.Send("tools/call", map[string]any{"name": "majordomus_list", "arguments": map[string]any{}})
		next <- sent{id, err}
	}()
	e := shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m", "--probe-timeout", "500ms", "--log-level", "debug")
	initialize(t, e, "codex")
	if _, err := e.WaitLog(ctx(t), "waiting for the lease", `"class":"busy"`); err != nil {
		t.Fatal(err)
	}
	if err := d.Signal(unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	list := <-next
	if list.err != nil {
		t.Fatalf("the slow call: %v", list.err)
	}
	if r, err := c.Await(ctx(t), list.id); err != nil || r.Error != nil {
		t.Fatalf("the next call: %v %+v", err, r.Error)
	}
	if _, err := c.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	id := peersOf(t, c).Caller
	var its []string
	for _, x := range slices.Backward(executionsOf(t, d)) {
		if x.Peer == id && x.Tool != "majordomus_search" {
			its = append(its, x.Tool)
		}
	}
	want := []string{"majordomus_fleet_inventory", "majordomus_list", "majordomus_peers"}
	if !slices.Equal(its, want) {
		t.Fatalf("the shared history has %q of the client's calls but its searches, want %q", its, want)
	}
}

// A call a client served alone made (numbered p1 there, as the checkout
// numbers the leaseholder's client), still running as the client joins
// the shared server as p2, and answered once its server is gone (killed)
// and its process took the lease over, is in the checkout's history as
// the client's, under p2: never under the id it numbered itself alone,
// which is the other client's there.
func TestACallMadeAloneAndAnsweredAfterATakeOverIsUnderTheClientsNewID(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	reg := madeRegistry(t)
	a, usable := aloneFromTheStart(t, dir, "--registry", reg)
	before := peersOf(t, a).Caller
	unlock := lockRegistry(t, reg)
	slow, err := a.Send("tools/call", map[string]any{"name": "majordomus_fleet_inventory", "arguments": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	d := leaseholderUnder(t, dir, usable, before)
	if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	d.Signal(unix.SIGKILL)
	d.Wait(ctx(t))
	call(t, a, "majordomus_list", nil)
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	unlock() // the slow call ends
	if _, err := a.Await(ctx(t), slow); err != nil {
		t.Fatal(err)
	}
	id := peersOf(t, a).Caller
	for _, x := range executionsOf(t, a) {
		if x.Tool == "majordomus_fleet_inventory" && x.Peer != id {
			t.Errorf("the call made alone is in the history under %s; the client is %s (it was %s alone)", x.Peer, id, before)
		}
	}
}

// A 2026-07-28 client served alone (it never initializes, nor sends
// server/discover) whose call made there is still running as it joins the
// shared server is one peer wherever that call ends: its process, taking
// the lease over once that server is killed, lists the client once, and
// no other peer it never had.
func TestAModernClientsCallAnsweredAfterItJoinedLeavesNoOtherPeer(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	reg := madeRegistry(t)
	state := filepath.Join(dir, ".ai/local/state")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := shared(t, dir, "--join-retry", "2s", "--registry", reg)
	modernCaller(t, m)
	if _, err := m.WaitLog(ctx(t), servedAlone); err != nil {
		t.Fatal(err)
	}
	unlock := lockRegistry(t, reg)
	slow, err := m.Send("tools/call", withMeta(map[string]any{"name": "majordomus_fleet_inventory", "arguments": map[string]any{}}, "modern-agent"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	d := shared(t, dir)
	initialize(t, d, "claude-code")
	serverURL(t, d)
	if _, err := m.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	unlock() // the slow call ends, the client served through the bridge
	if _, err := m.Await(ctx(t), slow); err != nil {
		t.Fatal(err)
	}
	d.Signal(unix.SIGKILL)
	d.Wait(ctx(t))
	modernCaller(t, m) // its next call finds the server gone
	if _, err := m.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	board := modernBoard(t, m)
	for _, p := range board.Peers {
		if p.Attached && p.ID != board.Caller {
			t.Errorf("the board lists %s (%s, %s) attached beside the client, %s: %+v", p.ID, p.Client.Name, p.Transport, board.Caller, board)
		}
	}
}

// madeRegistry is the path of a fleet registry another checkout's server
// made, for a test to lock (lockRegistry).
func madeRegistry(t *testing.T) string {
	t.Helper()
	reg := filepath.Join(t.TempDir(), "registry.db")
	elsewhere := shared(t, checkout(t), "--registry", reg)
	initialize(t, elsewhere, "gemini-cli")
	if _, err := elsewhere.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	return reg
}

// lockRegistry write-locks the pending byte of the registry at reg, as
// another process's write would, until unlock or the test's end: a reader
// waits SQLite's busy timeout.
func lockRegistry(t *testing.T, reg string) (unlock func()) {
	t.Helper()
	f, err := os.OpenFile(reg, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	pending := unix.Flock_t{Type: unix.F_WRLCK, Start: 0x40000000, Len: 1}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &pending); err != nil {
		t.Fatal(err)
	}
	return func() {
		pending.Type = unix.F_UNLCK
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &pending); err != nil {
			t.Fatal(err)
		}
	}
}
