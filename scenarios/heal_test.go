//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Alone is a detour (R2, issue 21 point 2): a client served alone because
// sharing failed keeps trying, and joins the shared server as soon as it
// can, its session carried.

// The lease directory is replaced by a file while the leaseholder is gone:
// both bridges are served alone. Once the directory is back, both join one
// board, their ids and announcement kept, each told so.
func TestClientsServedAloneJoinOneBoardOnceTheLeaseDirectoryIsBack(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, b, c := leaseholderAndTwo(t, dir)
	if isErr, text, _ := b.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the ordering rule", "scope": []string{"apps"}}, nil); isErr {
		t.Fatal(text)
	}
	ids := map[string]string{"codex": peersOf(t, b).Caller, "gemini-cli": peersOf(t, c).Caller}

	// B and C, stopped, learn that A is gone only once its directory is
	// a file: otherwise one of them takes over at once.
	stop(t, b)
	stop(t, c)
	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	leaseDir := filepath.Dir(leasePath(dir))
	if err := os.Rename(leaseDir, leaseDir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leaseDir, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mcpclient.Process{b, c} {
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*mcpclient.Process{b, c} {
		// the next call fails over, finds nothing to share, and is
		// answered alone
		var repo struct{ State string }
		if isErr, text, err := p.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
			t.Fatalf("a call while the lease directory is a file: %v %s %v", isErr, text, err)
		}
		if _, err := p.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
			t.Fatal(err)
		}
	}

	if err := os.Remove(leaseDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(leaseDir+".away", leaseDir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*mcpclient.Process{b, c} {
		if _, err := p.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
			t.Fatal(err)
		}
		if _, err := p.WaitFrame(ctx(t), "a notifications/message saying it shares again", func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), "now uses the checkout's shared server") &&
				strings.Contains(string(f), `"jsonrpc":"2.0"`) // a JSON-RPC message, however it was written
		}); err != nil {
			t.Fatal(err)
		}
	}
	for name, p := range map[string]*mcpclient.Process{"codex": b, "gemini-cli": c} {
		board := peersOf(t, p)
		if board.Caller != ids[name] {
			t.Errorf("%s is %s on the shared board, was %s", name, board.Caller, ids[name])
		}
		attached := map[string]bool{}
		for _, q := range board.Peers {
			if q.Attached {
				attached[q.Client.Name] = true
			}
			if q.Client.Name == "codex" && (q.Announcement == nil || q.Announcement.Intent != "the ordering rule") {
				t.Errorf("codex's announcement did not survive: %+v", q.Announcement)
			}
		}
		if !attached["codex"] || !attached["gemini-cli"] {
			t.Errorf("%s's board does not list both clients attached: %+v", name, board)
		}
	}
}

// A client served alone from the start (the state directory is a file)
// numbered its peer itself, p1. The file goes, another client starts and is
// p1 on the new shared board; when the first one joins, it keeps its
// session but not an id another client holds, and is told its new one.
// Every call it made alone, its announcement first, is in the shared
// history, in order, under that one new id.
func TestAClientServedAloneFromTheStartJoinsAndIsToldItsNewPeerID(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, usable := aloneFromTheStart(t, dir)
	if isErr, text, _ := a.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "alone, then shared", "scope": []string{"docs"}}, nil); isErr {
		t.Fatal(text)
	}
	before := peersOf(t, a).Caller
	made := []string{"majordomus_announce", "majordomus_peers"}
	for range 4 {
		for _, tool := range []string{"majordomus_repository", "majordomus_list", "majordomus_server"} {
			call(t, a, tool, nil)
			made = append(made, tool)
		}
	}

	d := leaseholderUnder(t, dir, usable, before)

	if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, a)
	if board.Caller == before {
		t.Fatalf("the client kept %s, which the leaseholder holds", before)
	}
	var its []string
	for _, x := range slices.Backward(executionsOf(t, d)) {
		if x.Peer == board.Caller {
			its = append(its, x.Tool)
		}
	}
	if want := append(made, "majordomus_peers"); !slices.Equal(its, want) {
		t.Errorf("the shared history has %d calls of %s, oldest first:\n%q\nwant the %d made alone, then the one made since:\n%q", len(its), board.Caller, its, len(made), want)
	}
	want := "it is peer " + board.Caller + " there, not " + before
	if _, err := a.WaitFrame(ctx(t), "a notifications/message with its new id", func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), want)
	}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, q := range board.Peers {
		if q.Attached {
			seen[q.Client.Name] = true
		}
		if q.ID == board.Caller && (q.Announcement == nil || q.Announcement.Intent != "alone, then shared") {
			t.Errorf("the announcement made alone did not join: %+v", q.Announcement)
		}
	}
	if !seen["codex"] || !seen["claude-code"] {
		t.Errorf("the shared board does not list both clients: %+v", board)
	}
}

// aloneFromTheStart starts a client in dir served alone from the start
// (its state directory is a file), which numbers its peer itself (p1), and
// tries to share again only long after the test's next client serves
// (args: its further flags); usable makes the state directory usable.
func aloneFromTheStart(t *testing.T, dir string, args ...string) (a *mcpclient.Process, usable func()) {
	t.Helper()
	state := filepath.Join(dir, ".ai/local/state")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	a = shared(t, dir, append([]string{"--join-retry", "2s"}, args...)...)
	initialize(t, a, "codex")
	if _, err := a.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
		t.Fatal(err)
	}
	return a, func() {
		if err := os.Remove(state); err != nil {
			t.Fatal(err)
		}
	}
}

// leaseholderUnder makes the state directory usable (usable) and starts
// the client that becomes the leaseholder, which the checkout numbers id,
// the one the client served alone numbered itself.
func leaseholderUnder(t *testing.T, dir string, usable func(), id string) *mcpclient.Process {
	t.Helper()
	usable()
	d := shared(t, dir)
	initialize(t, d, "claude-code")
	serverURL(t, d)
	if held := peersOf(t, d).Caller; held != id {
		t.Fatalf("the new leaseholder is %s, not %s: the scenario needs the ids to collide", held, id)
	}
	return d
}

// The id a client served alone numbered itself is never the checkout's,
// even where no client holds it: one given it by the checkout since, which
// announced and left, stays departed under it with its announcement,
// whether the first client joins as the leaseholder or through a bridge;
// the first client's own calls join the history under its new id.
func TestAnIDNumberedAloneIsNeverADepartedPeersOnJoining(t *testing.T) {
	t.Parallel()
	for _, through := range []string{"its own lease", "a bridge"} {
		t.Run(through, func(t *testing.T) {
			dir := checkout(t)
			a, usable := aloneFromTheStart(t, dir)
			call(t, a, "majordomus_list", nil)
			before := peersOf(t, a).Caller
			d := leaseholderUnder(t, dir, usable, before)
			call(t, d, "majordomus_announce", map[string]any{"intent": "the other's work", "scope": []string{"lib"}})
			if through == "a bridge" { // d's server goes on for another
				bridged(t, dir, "gemini-cli")
			}
			d.CloseStdin()
			if through == "its own lease" {
				exitsWith(t, d, 0)
			} else if _, err := d.WaitLog(ctx(t), `"msg":"session closed"`, `"peer":"`+before+`"`); err != nil {
				t.Fatal(err)
			}
			if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
				t.Fatal(err)
			}
			board := peersOf(t, a)
			i := -1
			for j, p := range board.Peers {
				if p.ID == before {
					i = j
				}
			}
			if board.Caller == before || i < 0 || board.Peers[i].Attached || board.Peers[i].Announcement == nil || board.Peers[i].Announcement.Intent != "the other's work" {
				t.Fatalf("joined as %s; the board: %+v", board.Caller, board.Peers)
			}
			var its []string
			for _, x := range executionsOf(t, a) {
				if x.Peer == board.Caller {
					its = append(its, x.Tool)
				}
			}
			if !slices.Contains(its, "majordomus_list") {
				t.Errorf("the call made alone is not in the history under %s: %q", board.Caller, its)
			}
			want := "it is peer " + board.Caller + " there, not " + before
			if _, err := a.WaitFrame(ctx(t), "a notifications/message with its new id", func(f []byte) bool {
				return strings.Contains(string(f), `"method":"notifications/message"`) && strings.Contains(string(f), want)
			}); err != nil {
				t.Fatal(err)
			}
			if through == "its own lease" { // its session, handed over, keeps the new id
				if err := os.Remove(leasePath(dir)); err != nil {
					t.Fatal(err)
				}
				if _, err := a.WaitLog(ctx(t), "this session continues locally"); err != nil {
					t.Fatal(err)
				}
				if again := peersOf(t, a).Caller; again != board.Caller {
					t.Fatalf("handed over, the client is %s, not %s", again, board.Caller)
				}
			}
		})
	}
}

// A client served alone that announced and joined through a bridge, then
// took the lease over, brings no record of the id it numbered itself
// alone onto the checkout's board: that id is the leaseholder's client's
// there, which never announced. Its announcement is on the board once,
// under the id it joined as, and the other client, back under its own
// id, has none.
func TestAnIDNumberedAloneLeavesNoAnnouncementBehindOnTakingOver(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, usable := aloneFromTheStart(t, dir)
	call(t, a, "majordomus_announce", map[string]any{"intent": "alone, then shared", "scope": []string{"docs"}})
	before := peersOf(t, a).Caller
	d := leaseholderUnder(t, dir, usable, before)
	if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	// d, stopped, loses its lease, which a's next call takes over
	stop(t, d)
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	call(t, a, "majordomus_list", nil)
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if err := d.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if _, err := d.WaitLog(ctx(t), "re-attached to the shared server"); err != nil {
		t.Fatal(err)
	}
	board := peersOf(t, a)
	for _, p := range board.Peers {
		if p.Announcement != nil && p.ID != board.Caller {
			t.Errorf("the client is %s; %s (%s) is on the board with an announcement %+v", board.Caller, p.ID, p.Client.Name, *p.Announcement)
		}
	}
}

// A client whose shared server will not start (its address is none of
// this machine's) is served alone, and its tries to share again back off
// as alone's do, each twice as far apart, though each wins the lease
// anew: the watch started on entering alone used to report the lease's
// state as a change, and tried again a second later, every time, for
// ever. Each try says why it failed, once.
func TestAServerThatWillNotStartIsTriedAgainLessAndLessOften(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	p := shared(t, dir, "--http-host", "203.0.113.1", "--log-level", "debug")
	initialize(t, p, "claude-code")
	if err := p.WaitLogs(ctx(t), 3, "still serving this client alone: starting the shared server: binding 203.0.113.1"); err != nil {
		t.Fatal(err)
	}
	var waits []string
	for _, line := range p.Logs() {
		if strings.Contains(line, "still serving this client alone") {
			waits = append(waits, line[strings.Index(line, "trying to share again in"):][:len("trying to share again in 1s")])
		}
	}
	if want := []string{"trying to share again in 1s", "trying to share again in 2s", "trying to share again in 4s"}; !slices.Equal(waits[:3], want) {
		t.Fatalf("the tries were %q apart, want %q", waits, want)
	}
	if n := p.CountLogs("starting the shared server: starting the shared server"); n != 0 {
		t.Fatalf("the failure was said twice over in %d lines", n)
	}
}

// A bridged client that nothing could serve at a take-over (its server
// gone, and its own layer refused under --strict) is answered with every
// reason meanwhile, and joins the shared server once one runs again.
func TestAClientNothingCouldServeJoinsOnceAServerRuns(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir, "--strict")
	initialize(t, b, "codex")
	attached(t, b)

	writeBroken(t, dir)
	a.Signal(syscall.SIGTERM)
	a.Wait(ctx(t))
	if _, err := b.WaitLog(ctx(t), "cannot serve this client alone either"); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Call(ctx(t), "tools/list", map[string]any{}); err != nil || r.Error == nil || !strings.Contains(r.Error.Message, "shared server unavailable") {
		t.Fatalf("tools/list while nothing serves the client: %+v %v", r.Error, err)
	}
	if err := os.Remove(filepath.Join(dir, ".ai/repo/rules/broken.md")); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	serverURL(t, c)
	if _, err := b.WaitLogAny(ctx(t), "re-attached to the shared server", "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	if r, err := b.Call(ctx(t), "tools/list", map[string]any{}); err != nil || r.Error != nil {
		t.Fatalf("tools/list once a server runs: %+v %v", r.Error, err)
	}
}

// A client that asked to hear errors only (logging/setLevel) is not sent
// the warning that it now shares: what it asked to hear decides, on the
// shared server as alone. (The notice was written to it whatever it asked.)
func TestAClientThatJoinsIsToldOnlyWhatItAskedToHear(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, usable := aloneFromTheStart(t, dir)
	if r, err := a.Call(ctx(t), "logging/setLevel", map[string]any{"level": "error"}); err != nil || r.Error != nil {
		t.Fatalf("logging/setLevel: %+v %v", r.Error, err)
	}
	leaseholderUnder(t, dir, usable, peersOf(t, a).Caller)
	if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	call(t, a, "majordomus_repository", nil) // answered after anything the joining wrote
	for _, f := range a.Frames() {
		if strings.Contains(string(f), `"notifications/message"`) && strings.Contains(string(f), "now uses the checkout's shared server") {
			t.Fatalf("a client that asked for errors only was sent %s", f)
		}
	}
}

// A client served alone that subscribed to an object, and to the server's
// own resource, is told on joining that its lists and what it subscribed
// to may have changed, as a session carried onto alone, or moved by a
// take-over, is: what changed as it moved was announced on neither
// server's session of it, and what majordomus://server says changed with
// the move itself (no longer served alone).
func TestAClientThatJoinsIsToldWhatItSubscribedToMayHaveChanged(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a, usable := aloneFromTheStart(t, dir)
	subscribed := []string{"majordomus://server", "majordomus://prompt/review@1"}
	for _, uri := range subscribed {
		if r, err := a.Call(ctx(t), "resources/subscribe", map[string]any{"uri": uri}); err != nil || r.Error != nil {
			t.Fatalf("resources/subscribe %s: %+v %v", uri, r.Error, err)
		}
	}
	leaseholderUnder(t, dir, usable, peersOf(t, a).Caller)
	if _, err := a.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
	call(t, a, "majordomus_repository", nil) // answered after anything the joining wrote
	told := map[string]bool{}
	for _, f := range a.Frames() {
		frame := string(f)
		if strings.Contains(frame, `"method":"notifications/resources/list_changed"`) {
			told["list_changed"] = true
		}
		for _, uri := range subscribed {
			if strings.Contains(frame, `"method":"notifications/resources/updated"`) && strings.Contains(frame, `"uri":"`+uri+`"`) {
				told[uri] = true
			}
		}
	}
	for _, what := range append([]string{"list_changed"}, subscribed...) {
		if !told[what] {
			t.Errorf("the client that joined was not told %s may have changed; told %v", what, told)
		}
	}
}

// A client served alone whose own process then takes the lease over is
// told what it subscribed to may have changed, as one that joins through
// a bridge is: the layer goes on from the generation the checkout's last
// server served (majordomus://repository says another), and
// majordomus://server no longer says it is served alone.
func TestAClientServedAloneThatTakesTheLeaseIsToldWhatItSubscribedToMayHaveChanged(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	l := shared(t, dir)
	initialize(t, l, "claude-code")
	serverURL(t, l)
	editTold(t, dir, l, "5. Is the README still true?\n")
	editTold(t, dir, l, "6. Are the tests still true?\n")
	if g := generationTold(t, l); g != 3 {
		t.Fatalf("generation %d after two changes, want 3", g)
	}
	l.CloseStdin()
	exitsWith(t, l, 0)

	state := filepath.Join(dir, ".ai/local/state")
	if err := os.Rename(state, state+".kept"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := shared(t, dir, "--join-retry", "2s")
	initialize(t, a, "codex")
	if _, err := a.WaitLog(ctx(t), "cannot use the shared server"); err != nil {
		t.Fatal(err)
	}
	subscribed := []string{"majordomus://repository", "majordomus://server"}
	for _, uri := range subscribed {
		if r, err := a.Call(ctx(t), "resources/subscribe", map[string]any{"uri": uri}); err != nil || r.Error != nil {
			t.Fatalf("resources/subscribe %s: %+v %v", uri, r.Error, err)
		}
	}
	alone := generationTold(t, a)
	from := len(a.Frames())
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(state+".kept", state); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"shared server listening on", "joined the checkout's shared server"} { // its own process serves the checkout now
		if _, err := a.WaitLog(ctx(t), line); err != nil {
			t.Fatal(err)
		}
	}
	if g := generationTold(t, a); g == alone {
		t.Fatalf("generation %d alone and as the leaseholder: the scenario needs it to move", g)
	}
	for _, uri := range subscribed {
		if _, err := a.WaitFrameAfter(ctx(t), "resources/updated "+uri, from, func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/resources/updated"`) && strings.Contains(string(f), `"uri":"`+uri+`"`)
		}); err != nil {
			t.Errorf("the client served alone whose process took the lease over was not told %s may have changed: %v", uri, err)
		}
	}
}
