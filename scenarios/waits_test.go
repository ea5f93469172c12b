package scenarios

// What an election waits for, and what it never waits for
// (docs/design.md#judging-a-lease, docs/design.md#sharing-heals: nothing
// transient is permanent): an emptied lease is taken over at once, however
// often it is emptied; a full server is waited for as it asks, never in a
// spin, and past the election bound the client is served alone with that
// reason.

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// An emptied lease is taken over at once (docs/design.md#judging-a-lease):
// no owner writes an empty lease, so nobody waits for one, and emptying it
// again soon after re-arms no wait. Three clients share; the lease is
// truncated, taken over, and truncated again within the bind grace of the
// first truncation; each time, the lease is taken over as an empty one, no
// process waits for it, and afterwards every client answers and all three
// are on one board.
func TestATruncatedLeaseIsTakenOverAtOnce(t *testing.T) {
	// A bind grace far longer than the scenario: were an empty lease
	// judged binding, the election bound would run out first and every
	// client would be served alone. No heartbeat moves a bridge: the end
	// of its stream does.
	flags := []string{"--bind-grace", "10m", "--heartbeat", "10m", "--idle-timeout", "20m", "--log-level", "debug"}
	dir := checkout(t)
	a := shared(t, dir, flags...)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir, flags...)
	initialize(t, b, "codex")
	c := shared(t, dir, flags...)
	initialize(t, c, "gemini-cli")
	for _, p := range []*mcpclient.Process{b, c} {
		// idle once its stream is open
		if _, err := p.WaitLog(ctx(t), "stream open"); err != nil {
			t.Fatal(err)
		}
	}
	all := []*mcpclient.Process{a, b, c}

	// First truncation: a loses its lease and ends its bridges' streams;
	// they move at once, a hands its own client over at once too, and
	// whoever elects first finds the lease empty and takes it over.
	truncate(t, dir)
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's", "the lease file was emptied"); err != nil {
		t.Fatal(err)
	}
	oneTakesOver(t, all...)
	emptied := tookEmpty(t, all, 0)

	// Second truncation, as soon as it serves: well within the bind grace
	// of the first, and of its own lease. The same again.
	truncate(t, dir)
	for _, p := range all {
		if _, err := p.WaitLogsAny(ctx(t), 2, "took over as the shared server", "re-attached to the shared server"); err != nil {
			t.Fatal(err)
		}
	}
	tookEmpty(t, all, emptied)
	for name, p := range map[string]*mcpclient.Process{"claude-code": a, "codex": b, "gemini-cli": c} {
		board := peersOf(t, p)
		attached := map[string]bool{}
		for _, peer := range board.Peers {
			if peer.Attached {
				attached[peer.Client.Name] = true
			}
		}
		if len(attached) != 3 || !attached["claude-code"] || !attached["codex"] || !attached["gemini-cli"] {
			t.Errorf("%s's board after the truncations: %+v", name, board.Peers)
		}
		// The empty lease was never waited for: a client that elected
		// while another had just won it waited only for that one to
		// publish its URL.
		for _, line := range p.Logs() {
			if strings.Contains(line, `"class":"binding"`) && !slices.ContainsFunc(all, func(q *mcpclient.Process) bool {
				return strings.Contains(line, fmt.Sprintf("its owner (pid %d)", q.Cmd.Process.Pid))
			}) {
				t.Errorf("%s waited for a lease no client of the three held: %s", name, line)
			}
		}
		if n := p.CountLogs("cannot use the shared server"); n != 0 {
			t.Errorf("%s could not use the shared server %d times", name, n)
		}
	}
}

// tookEmpty checks that more than before of ps's lines say that an empty
// lease was taken over (by whoever took it, or tried to and was outraced
// by one that found no lease at all), and returns how many do.
func tookEmpty(t *testing.T, ps []*mcpclient.Process, before int) int {
	t.Helper()
	n := 0
	for _, p := range ps {
		n += p.CountLogs("empty lease: the file holds nothing", "taking it over")
	}
	if n <= before {
		t.Fatalf("no client took the emptied lease over as an empty one (%d such lines, %d before)", n, before)
	}
	return n
}

// truncate empties the lease file in place, as a crash of an editor or a
// full disk might.
func truncate(t *testing.T, dir string) {
	t.Helper()
	if err := os.Truncate(leasePath(dir), 0); err != nil {
		t.Fatal(err)
	}
}

// A full server (its session cap reached: 503, Retry-After: 5) sends a
// newcomer alone at once (docs/design.md#sharing-heals), whatever its
// election's bound (here far longer than any step): it is told why, says
// the server is full (never that it is shutting down), is answered alone
// while it tries the server again as it asks, never in a spin and never
// attaching while the server says it is full, and joins once the server
// has room. Neither says each try at info.
func TestAFullServerServesANewcomerAloneAtOnceUntilItHasRoom(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir, "--max-sessions", "1", "--log-level", "debug")
	initialize(t, a, "claude-code") // its own client takes no HTTP session
	url := serverURL(t, a)
	b := shared(t, dir)
	initialize(t, b, "codex") // the one session the server takes
	if _, err := b.WaitLog(ctx(t), "the client's session opened on the shared server"); err != nil {
		t.Fatal(err)
	}

	c := shared(t, dir, "--election-bound", "10m", "--log-level", "debug")
	// Answered in process, as it may be, before the server refused it, and
	// never greeted as one the full server serves.
	if instructions := initialize(t, c, "gemini-cli"); strings.Contains(instructions, "served by the checkout's shared server") {
		t.Fatalf("a newcomer the full server refuses is told it shares:\n%s", instructions)
	}
	full := fmt.Sprintf("the shared server at %s is full (1 session)", url)
	if reason := logField(t, c, "cannot use the shared server", "reason"); reason != full {
		t.Fatalf("served alone because %q, want %q", reason, full)
	}
	toldServedAlone(t, c, "")
	// its next try, as the server asks, hears from the server's own
	// identity that it is still full, and does not attach (attaching, it
	// would hold the client's calls as it carries their session, only to
	// be refused); it is answered alone all the while
	if _, err := c.WaitLog(ctx(t), fmt.Sprintf("still serving this client alone: the shared server at %s is full;", url)); err != nil {
		t.Fatal(err)
	}
	if board := peersOf(t, c); len(board.Peers) != 1 || board.Peers[0].ID != board.Caller {
		t.Fatalf("a client the full server refused is not on a board of its own: %+v", board)
	}
	attaches := c.CountLogs(`"msg":"transition"`, `"to":"attached"`)
	refusals := a.CountLogs("a new session was refused: the server is full")
	logs := strings.Join(c.Logs(), "\n")
	if attaches > refusals+1 || len(c.Logs()) > 60 || strings.Contains(logs, "shutting down") {
		t.Errorf("%d attaches for %d refusals, %d log lines: a spin, or a full server said to be shutting down\n%s", attaches, refusals, len(c.Logs()), logs)
	}
	info := `"level":"info"`
	if n, m := a.CountLogs(info, "a new session was refused"), c.CountLogs(info, `"msg":"transition"`, `"to":"attached"`); n != 1 || m != 1 {
		t.Errorf("the full server said %d refusals at info, its newcomer %d tries: want each once\n%s", n, m, logs)
	}

	if err := b.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
		t.Fatal(err)
	}
}
