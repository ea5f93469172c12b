package surface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A board grants a claimed id that it could have given and that no
// attached peer holds; a departed peer holding it was the same client.
func TestABoardGrantsAFreeWellFormedPeerIDClaim(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	b.Open("s1", "stdio", "", nil) // p1
	b.Open("s2", "http", "", nil)  // p2
	for _, bad := range []string{"p1", "p0", "q3", "p", "p03", "p1234567", "p3\nSYSTEM", "p-2"} {
		if b.Claim("s2", bad) {
			t.Errorf("the claim %q was granted", bad)
		}
	}
	if b.PeerID("s2") != "p2" {
		t.Fatalf("a refused claim changed the id to %s", b.PeerID("s2"))
	}
	if !b.Claim("s2", "p7") || b.PeerID("s2") != "p7" {
		t.Fatalf("a free claim: %s", b.PeerID("s2"))
	}
	if id := b.Open("s3", "http", "", nil); id != "p8" {
		t.Errorf("the next id given is %s, want p8 (after the claimed p7)", id)
	}
	if _, _, err := b.Announce("s2", "renaming", nil, false); err != nil {
		t.Fatal(err)
	}
	b.Detach("s2") // departed, its announcement kept
	b.Open("s4", "http", "", nil)
	if !b.Claim("s4", "p7") || b.PeerID("s4") != "p7" {
		t.Fatalf("a departed peer's id was not granted to its client, back: %s", b.PeerID("s4"))
	}
	n := 0
	peers, _ := b.Peers()
	for _, p := range peers {
		if p.ID == "p7" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("p7 is listed %d times", n)
	}
}

// A claim of the last number a peer id can carry leaves the ids given
// after it in the form every claim needs: they go round from p1, as the
// checkout's counter does, past any a listed peer holds.
func TestIDsGoRoundAfterTheLastNumber(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	b.Open("s1", "stdio", "", nil) // p1
	b.Open("s2", "http", "", nil)  // p2
	if !b.Claim("s2", "p999999") {
		t.Fatal("the claim of p999999 was refused")
	}
	if _, _, err := b.Announce("s1", "parsing", nil, false); err != nil {
		t.Fatal(err)
	}
	b.Detach("s1") // p1 departed, listed with its announcement
	if id := b.Open("s3", "http", "", nil); id != "p2" {
		t.Errorf("the id given after p999999 is %q, want p2: one a claim can carry, held by no listed peer", id)
	}
}

// A session on a server that lost its lease gives its peer id up to a
// session that claims it: its client, moved to the current server, which
// may be the next term of the same process, on this board. The id comes
// with what the peer had, and the old session's end later leaves the
// claimant on the board. Until the loss, a session keeps its id, and a
// session opened after it keeps its own.
func TestADrainingSessionGivesItsPeerIDToItsClaimant(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	old := b.Open("old", "http", "", nil)
	b.Identify("old", Client{Name: "gemini-cli"})
	if _, _, err := b.Announce("old", "the release notes", []string{"docs"}, false); err != nil {
		t.Fatal(err)
	}
	b.Open("plain", "http", "", nil)
	if id := b.Open("early", "http", old, nil); id == old {
		t.Fatalf("%s was granted while its session's server held the lease", old)
	}
	b.Drain()
	// A term this process wins again keeps the checkout's state, which
	// lists the draining peer as an announcer: only a claimant takes its id.
	b.keep([]Peer{{ID: old, Client: Client{Name: "gemini-cli"}, Announcement: &Announcement{Intent: "the release notes"}}}, nil)
	if b.PeerID("old") != old {
		t.Fatalf("keeping the checkout's state took %s from its draining session", old)
	}
	if id := b.Open("moved", "http", old, nil); id != old {
		t.Fatalf("the claim of a draining session's %s gave %s", old, id)
	}
	if id := b.Open("late", "http", old, nil); id == old {
		t.Fatalf("%s was granted again, away from a session opened after the loss", old)
	}
	b.Detach("old")
	peers, _ := b.Peers()
	var holders []Peer
	attached := 0
	for _, p := range peers {
		if p.Attached {
			attached++
		}
		if p.ID == old {
			holders = append(holders, p)
		}
	}
	if len(holders) != 1 || !holders[0].Attached || holders[0].Client.Name != "gemini-cli" ||
		holders[0].Announcement == nil || holders[0].Announcement.Intent != "the release notes" {
		t.Fatalf("%s on the board: %+v; want the claimant, attached, with the old peer's client and announcement", old, holders)
	}
	if attached != 4 { // plain, early, moved and late
		t.Errorf("%d peers attached, want 4: %+v", attached, peers)
	}
}

// A session its client ended while a call of its was answered stays on
// the board until the call has, but gives its peer id up to the session
// its client opens next, with what the peer had: the client keeps its id
// however long the call it left takes. Only that session leaves.
func TestALeavingSessionGivesItsPeerIDToItsClaimant(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	left := b.Open("left", "http", "", nil)
	b.Identify("left", Client{Name: "codex"})
	if _, _, err := b.Announce("left", "the parser", []string{"lib"}, false); err != nil {
		t.Fatal(err)
	}
	other := b.Open("other", "http", "", nil)
	if id := b.Open("early", "http", left, nil); id == left {
		t.Fatalf("%s was granted while its session was attached", left)
	}
	b.Leave("left")
	if id := b.Open("again", "http", left, nil); id != left {
		t.Fatalf("the claim of a leaving session's %s gave %s", left, id)
	}
	if id := b.Open("stranger", "http", other, nil); id == other {
		t.Fatalf("%s was granted away from a session that is not leaving", other)
	}
	b.Detach("left") // its call ended: it ends
	if b.PeerID("again") != left || b.PeerID("other") != other {
		t.Fatalf("after the left session ended: again is %q, other %q", b.PeerID("again"), b.PeerID("other"))
	}
	peers, _ := b.Peers()
	for _, p := range peers {
		if p.ID == left && (!p.Attached || p.Client.Name != "codex" || p.Announcement == nil || p.Announcement.Intent != "the parser") {
			t.Errorf("%s on the board: %+v; want the claimant, attached, with the left peer's client and announcement", left, p)
		}
	}
}

// A session that claims a departed peer's id, at its opening or at its
// initialize, gets back what that peer had announced, unless it announces
// anew: its carried announcement, or one it made before it claimed. Opened
// under the id, it is named as that peer's client from its first instant,
// before its initialize names it again.
func TestAClaimedDepartedIDBringsBackItsAnnouncement(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	departed := func(session, intent string) string {
		id := b.Open(session, "stdio", "", nil)
		b.Identify(session, Client{Name: "agent " + intent})
		if _, _, err := b.Announce(session, intent, []string{"docs/" + intent}, false); err != nil {
			t.Fatal(err)
		}
		b.Detach(session)
		return id
	}
	announced := func(id string) *Announcement {
		peers, _ := b.Peers()
		for _, p := range peers {
			if p.ID == id && p.Attached {
				return p.Announcement
			}
		}
		t.Fatalf("%s is not attached: %+v", id, peers)
		return nil
	}
	opened := departed("s1", "opened")
	b.Open("s1b", "stdio", opened, nil)
	if a := announced(opened); a == nil || a.Intent != "opened" || !slices.Equal(a.Scope, []string{"docs/opened"}) {
		t.Errorf("opened under %s, it has %+v, want its announcement back", opened, a)
	}
	claimed := departed("s2", "claimed")
	b.Open("s2b", "http", "", nil)
	if !b.Claim("s2b", claimed) {
		t.Fatalf("%s was not granted", claimed)
	}
	if a := announced(claimed); a == nil || a.Intent != "claimed" {
		t.Errorf("claiming %s, it has %+v, want its announcement back", claimed, a)
	}
	carried := departed("s3", "before")
	b.Open("s3b", "stdio", carried, &Announcement{Intent: "carried", Scope: []string{"x"}})
	if a := announced(carried); a == nil || a.Intent != "carried" {
		t.Errorf("opened with its own announcement, %s has %+v", carried, a)
	}
	for _, p := range b.order {
		if want := map[string]string{opened: "agent opened", carried: "agent before"}[p.ID]; want != "" && p.Client.Name != want {
			t.Errorf("opened under %s, before its initialize, its client is %q, want %q", p.ID, p.Client.Name, want)
		}
	}
	anew := departed("s4", "before")
	b.Open("s4b", "http", "", nil)
	if _, _, err := b.Announce("s4b", "anew", nil, false); err != nil {
		t.Fatal(err)
	}
	if !b.Claim("s4b", anew) {
		t.Fatalf("%s was not granted", anew)
	}
	if a := announced(anew); a == nil || a.Intent != "anew" {
		t.Errorf("announced anew, %s has %+v", anew, a)
	}
}

// A peer back on a board with its claim (its session carried there after
// a take-over) is the peer it was: it connected when it first did, and
// the claim it brings again keeps its time; a claim it changed is new.
func TestAPeerBackKeepsItsTimes(t *testing.T) {
	now := time.Date(2026, 12, 6, 3, 0, 0, 0, time.UTC)
	b := NewBoard(func() time.Time { return now }, time.Hour)
	var heard []Peer // what the checkout's record is told
	b.keep(nil, func(p Peer) { heard = append(heard, p) })
	peerOf := func(id string) Peer {
		peers, _ := b.Peers()
		for _, p := range peers {
			if p.ID == id && p.Attached {
				return p
			}
		}
		t.Fatalf("%s is not attached: %+v", id, peers)
		return Peer{}
	}
	for _, tc := range []struct {
		scope []string
		kept  bool
	}{{[]string{"z/"}, true}, {[]string{"y/"}, false}} {
		session := fmt.Sprint("s", tc.scope)
		id := b.Open(session, "http", "", nil)
		b.Identify(session, Client{Name: "codex"})
		if _, _, err := b.Announce(session, "edits", []string{"z/"}, false); err != nil {
			t.Fatal(err)
		}
		was := peerOf(id)
		b.Detach(session)
		now = now.Add(time.Minute)
		heard = nil
		b.Open(session+" carried", "http", id, &Announcement{Intent: "edits", Scope: tc.scope})
		is := peerOf(id)
		if len(heard) != 1 || !heard[0].Attached || heard[0].Client.Name != "codex" || !heard[0].Announcement.At.Equal(is.Announcement.At) {
			t.Errorf("scope %v: the checkout's record heard %+v of the peer back; want it once, attached, as the board has it", tc.scope, heard)
		}
		if !is.ConnectedAt.Equal(was.ConnectedAt) || is.Announcement.At.Equal(was.Announcement.At) != tc.kept {
			t.Errorf("scope %v: back, connected %s and announced %s; it connected %s and announced %s before",
				tc.scope, is.ConnectedAt, is.Announcement.At, was.ConnectedAt, was.Announcement.At)
		}
	}
	// A new session given a departed peer's id (its host's next client,
	// host.go) brings no claim: it connected now.
	id := b.Open("s3", "stdio", "", nil)
	if _, _, err := b.Announce("s3", "edits", []string{"x/"}, false); err != nil {
		t.Fatal(err)
	}
	b.Detach("s3")
	now = now.Add(20 * time.Hour)
	b.Open("s3 next", "stdio", id, nil)
	if is := peerOf(id); !is.ConnectedAt.Equal(now) {
		t.Errorf("its host's next client connected %s; it is %s now", is.ConnectedAt, now)
	}
}

// The initialize result gives the session's peer id in its _meta, and an
// initialize whose context claims an id gets it.
func TestInitializeGivesThePeerIDAndGrantsAClaim(t *testing.T) {
	f := newFixture(t)
	f.s.cfg.PeerClaim = func(ctx context.Context) string { id, _ := ctx.Value(claimKey{}).(string); return id }
	f.connect("claude-code") // p1
	sess := server.NewInProcessSession("carried", nil)
	if err := f.s.MCP.RegisterSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize",
		"params": map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "codex"}}})
	ctx := context.WithValue(f.s.MCP.WithContext(context.Background(), sess), claimKey{}, "p5")
	answer, _ := json.Marshal(f.s.MCP.HandleMessage(ctx, msg))
	var r struct{ Result mcp.InitializeResult }
	mustDecode(t, answer, &r)
	if r.Result.Meta == nil || r.Result.Meta.AdditionalFields[PeerMeta] != "p5" || !strings.Contains(r.Result.Instructions, "You are peer p5") {
		t.Fatalf("initialize answered %s", answer)
	}
}

type claimKey struct{}

// A session registered by a request that had already ended is no client:
// mcp-go's GET handler registers a session again when the DELETE that
// ended it came just before, under the stream's cancelled context. It is
// not put on the board, and draws no peer id.
func TestASessionRegisteredByAnEndedRequestIsNotOnTheBoard(t *testing.T) {
	f := newFixture(t)
	f.connect("claude-code") // p1
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	ghost := server.NewInProcessSession("ended", nil)
	if err := f.s.MCP.RegisterSession(ended, ghost); err != nil {
		t.Fatal(err)
	}
	if peers, n := f.s.Board.Peers(); n != 1 {
		t.Fatalf("the board lists %d peers after an ended request's session: %+v", n, peers)
	}
	f.s.MCP.UnregisterSession(ended, ghost.SessionID())
	f.connect("codex")
	if peers, _ := f.s.Board.Peers(); len(peers) != 2 || peers[1].ID != "p2" {
		t.Fatalf("the next client is not p2: %+v", peers)
	}
}

// The board's overlaps list each overlapping pair once, with the paths of
// each side that overlap the other's: what majordomus_announce answers
// each of them.
func TestTheOverlapsNameEachSidesPaths(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	for _, s := range []string{"s1", "s2", "s3"} {
		b.Open(s, "http", "", nil)
	}
	announce := func(session string, scope ...string) []Overlap {
		_, overlaps, err := b.Announce(session, "work", scope, false)
		if err != nil {
			t.Fatal(err)
		}
		return overlaps
	}
	announce("s1", "lib/parse", "docs/parse.md")
	told := announce("s2", "lib", "cmd")
	announce("s3", "web")
	pairs, count := b.Overlaps()
	if count != 1 || len(pairs) != 1 || pairs[0].A != "p1" || pairs[0].B != "p2" ||
		strings.Join(pairs[0].Paths, ",") != "lib/parse" || strings.Join(pairs[0].BPaths, ",") != "lib" {
		t.Fatalf("the overlaps are %+v", pairs)
	}
	if len(told) != 1 || !slices.Equal(told[0].Paths, pairs[0].BPaths) {
		t.Errorf("majordomus_announce told p2 %+v; the board says %v", told, pairs[0].BPaths)
	}
}

// The list of overlaps is bounded however many announcers meet: every
// pair is counted, the first hundred listed, each with ten paths a side
// and how many more it left out.
func TestTheOverlapsAreCountedAllAndListedBounded(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	const peers, paths = 120, 12
	for i := range peers {
		session := fmt.Sprint("s", i)
		b.Open(session, "http", "", nil)
		scope := make([]string, paths)
		for j := range scope {
			scope[j] = fmt.Sprintf("lib/%d/%d", i, j)
		}
		scope[0] = "lib" // meets every other peer's paths
		if _, _, err := b.Announce(session, "work", scope, false); err != nil {
			t.Fatal(err)
		}
	}
	pairs, count := b.Overlaps()
	if want := peers * (peers - 1) / 2; count != want {
		t.Fatalf("%d pairs counted, want %d", count, want)
	}
	if len(pairs) != maxListedPairs {
		t.Fatalf("%d pairs listed, want %d", len(pairs), maxListedPairs)
	}
	for _, p := range pairs {
		if len(p.Paths) != maxPairPaths || p.More != paths-maxPairPaths || len(p.BPaths) != maxPairPaths || p.BMore != paths-maxPairPaths {
			t.Fatalf("a pair lists %d+%d and %d+%d paths, want %d+%d a side", len(p.Paths), p.More, len(p.BPaths), p.BMore, maxPairPaths, paths-maxPairPaths)
		}
	}
	if pairs[0].A != "p1" || pairs[0].B != "p2" || pairs[0].Paths[0] != "lib" {
		t.Fatalf("the first pair is %+v", pairs[0])
	}
}

// NewBoard returns an empty board reading time from now, on which a peer
// known from its requests alone stays unheard for idle.
func NewBoard(now func() time.Time, idle time.Duration) *Board {
	return newBoard(now, idle, nil, &changes{})
}

// The process's own client (its stdio peer) is seen as of every reading
// while it is attached, and as of its departure once it left; a peer of
// another process is seen when it is heard from, and not otherwise.
func TestTheProcesssOwnClientIsSeenUntilItLeaves(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	b := NewBoard(func() time.Time { return at }, time.Minute)
	b.Open("stdio", "stdio", "", nil)
	b.Open("s2", "http", "", nil)
	seen := func(id string) time.Time {
		peers, _ := b.Peers()
		i := slices.IndexFunc(peers, func(p Peer) bool { return p.ID == id })
		if i < 0 {
			t.Fatalf("%s is not on the board: %+v", id, peers)
		}
		return peers[i].LastSeen
	}
	opened := at
	at = at.Add(time.Hour)
	if got := seen("p1"); !got.Equal(at) {
		t.Errorf("the idle own client was last seen at %s, want the reading's %s", got, at)
	}
	if got := seen("p2"); !got.Equal(opened) {
		t.Errorf("the silent http peer was last seen at %s, want its opening %s", got, opened)
	}
	if _, _, err := b.Announce("stdio", "staying listed", nil, false); err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Hour)
	left := at
	b.Detach("stdio")
	at = at.Add(time.Hour)
	if got := seen("p1"); !got.Equal(left) {
		t.Errorf("the departed own client was last seen at %s, want its departure %s", got, left)
	}
}

// What each client calls itself, times the clients, cannot fill another's
// context: a board's summary, which a new client's instructions quote,
// names a bounded number of the attached peers and counts the rest; and
// a server whose board is that full greets no attaching client early,
// since the greeting could not tell where the summary names the newcomer.
func TestASummaryNamesABoundedNumberOfPeers(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("\U000F0000", 60) // 10 bytes each, quoted
	for i := range maxSummaryPeers - 1 {
		f.connect(fmt.Sprintf("%02d%s", i, long))
	}
	if g := f.s.Greeting(); g.Declared == "" || !strings.Contains(g.Board, "p15 ") {
		t.Fatalf("with %d peers, the greeting is %+v; want one naming them all", maxSummaryPeers-1, g)
	}
	for i := range 5 {
		f.connect(fmt.Sprintf("more%d%s", i, long))
	}
	summary := f.s.Board.Summary()
	if !strings.HasSuffix(summary, " and 4 more (majordomus_peers lists them)") || strings.Contains(summary, "p17 ") || len(summary) > maxSummaryPeers*700 {
		t.Errorf("the summary of %d peers (%d bytes) ends %q", maxSummaryPeers+4, len(summary), summary[max(0, len(summary)-80):])
	}
	if g := f.s.Greeting(); g.Declared != "" {
		t.Errorf("a full board's server greets: %+v", g)
	}
}

// Two boards that numbered their clients alone (the checkout's counter
// failing) and then number them the checkout's give them different ids,
// whichever number each had reached: the counter counts the number a
// board gives past it.
func TestBoardsNumberedAloneNumberTheirClientsApartOnceCounted(t *testing.T) {
	at := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	counter, failing := 0, true
	numbers := func(atLeast int) (int, error) {
		if failing {
			return 0, errors.New("the counter cannot be used")
		}
		counter = max(counter+1, atLeast)
		return counter, nil
	}
	a, b := newBoard(func() time.Time { return at }, time.Minute, numbers, &changes{}), newBoard(func() time.Time { return at }, time.Minute, numbers, &changes{})
	a.Open("stdio", "stdio", "", nil)
	b.Open("stdio", "stdio", "", nil)
	if renamed := a.renumber(); len(renamed) != 0 || a.PeerID("stdio") != "p1" { // the counter still failing
		t.Fatalf("renumbered without the counter: %v, now %s", renamed, a.PeerID("stdio"))
	}
	failing = false
	a.renumber()
	b.renumber()
	// A number the counter gives that this board once gave alone, to a
	// client gone since, is the checkout's now: its client is renumbered.
	theirs, recovered := 1, false
	c := newBoard(func() time.Time { return at }, time.Minute, func(atLeast int) (int, error) {
		if !recovered {
			return 0, errors.New("the counter cannot be used")
		}
		theirs = max(theirs+1, atLeast)
		return theirs, nil
	}, &changes{})
	c.Open("stays", "stdio", "", nil)
	c.Open("leaves", "http", "", nil)
	c.Detach("leaves")
	recovered = true
	if renamed := c.renumber(); len(renamed) != 1 || !c.Counted(c.PeerID("stays")) {
		t.Fatalf("renumbered %v: the client is %s, counted %v", renamed, c.PeerID("stays"), c.Counted(c.PeerID("stays")))
	}
	if x, y := a.PeerID("stdio"), b.PeerID("stdio"); x == y || !a.Counted(x) || !b.Counted(y) {
		t.Fatalf("the two clients are %s and %s", x, y)
	}
	// A claim granted is no number of the board's: the counter goes on
	// from where it stood, not past the claim (and round to p1).
	a.Open("claimed", "http", "p999998", nil)
	before := counter
	if id := a.Open("next", "http", "", nil); id != fmt.Sprintf("p%d", before+1) || counter != before+1 {
		t.Fatalf("after a claim of p999998, a new peer is %s and the counter at %d (was %d)", id, counter, before)
	}
	// Nor once the board numbered past the claim while the counter failed.
	a.Open("claimed again", "http", "p900000", nil)
	failing = true
	a.Open("alone", "http", "", nil)
	failing, before = false, counter
	if id := a.Open("counted", "http", "", nil); id != fmt.Sprintf("p%d", before+1) || counter != before+1 {
		t.Fatalf("after a claim and a failed draw, a new peer is %s and the counter at %d (was %d)", id, counter, before)
	}
}

// An announcement the checkout's state kept without a scope (another
// build's, or one edited by hand) is listed with an empty one, as the
// tool's own are: a scope of null broke the board page's table.
func TestAKeptAnnouncementWithoutAScopeIsListedWithAnEmptyOne(t *testing.T) {
	b := NewBoard(time.Now, time.Minute)
	b.keep([]Peer{{ID: "p7", Client: Client{Name: "old"}, Announcement: &Announcement{Intent: "the notes"}}}, nil)
	peers, _ := b.Peers()
	out, err := json.Marshal(peers)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"intent":"the notes","scope":[]`) {
		t.Fatalf("the kept announcement is listed as %s", out)
	}
}
