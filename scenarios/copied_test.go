package scenarios

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A checkout copied with its local state while its server runs (cp -a,
// rsync -a) has the original's lease, whose server would prove the copied
// secret: the copy's first client judges it as a lease whose server does
// not answer for this checkout, held by nobody here where the lock tells
// (Linux: stale, taken over at once; elsewhere its owner is alive: busy,
// taken over once the busy grace is out), and serves the copy; the
// original's server and lease are left alone. (It was bridged to the original's server, its
// board and its layer, as long as that ran.)
func TestACopiedCheckoutIsServedByItsOwnServer(t *testing.T) {
	t.Parallel()
	for _, linked := range []bool{false, true} { // cp -a, and cp -al: its files hard links to the original's
		t.Run(map[bool]string{false: "copied", true: "hard-linked"}[linked], func(t *testing.T) {
			original := checkout(t)
			a := shared(t, original)
			initialize(t, a, "claude-code")
			originalURL := serverURL(t, a)

			copied := checkoutTimed(t, "  busy_grace_seconds: 3\n")
			copyTree(t, filepath.Join(original, ".ai", "local"), filepath.Join(copied, ".ai", "local"), linked)
			if readLease(t, copied)["url"] != originalURL {
				t.Fatal("the copy's lease is not the original's")
			}
			b := shared(t, copied)
			initialize(t, b, "codex")
			judged := "busy lease: the server it names at " + originalURL + " does not answer (it serves the checkout at"
			if runtime.GOOS == "linux" && !linked { // a hard link is the file the original's server holds
				judged = "stale lease: it came here with a copy of the checkout at"
			}
			if _, err := b.WaitLog(ctx(t), judged, "taking it over"); err != nil {
				t.Fatal(err)
			}
			copyURL := serverURL(t, b)
			if copyURL == originalURL {
				t.Fatalf("the copy is served by the original's server at %s", originalURL)
			}
			c := shared(t, copied)
			initialize(t, c, "gemini-cli")
			attached(t, c, copyURL)
			if board := peersOf(t, c); board.Count != 2 {
				t.Fatalf("the copy's board: %+v", board)
			}
			if board := peersOf(t, a); board.Count != 1 || readLease(t, original)["url"] != originalURL {
				t.Fatalf("the original's server or lease changed: %+v", board)
			}
		})
	}
}

// copyTree copies the directory src to dst as cp -a does: its files and
// directories with their modes; linked, its files as hard links to
// src's, as cp -al does.
func copyTree(t *testing.T, src, dst string, linked bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, 0o700); err != nil {
				return err
			}
		case info.Mode().IsRegular() && linked:
			return os.Link(path, to)
		case info.Mode().IsRegular():
			body, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, body, 0o600); err != nil {
				return err
			}
		default:
			return nil
		}
		return os.Chmod(to, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A checkout moved while it is served (mv) takes its lease with it: its
// server serves the clients started at the old path on, as one, from what
// it read (nothing can replace a lease that is gone with its checkout),
// saying so, without making the old path again; a client started where
// the checkout is now finds that lease there, its server proves it holds
// it, and it shares that server.
func TestAMovedCheckoutIsServedOnAndNotMadeAgain(t *testing.T) {
	dir, moved, a, b := servedThenMoved(t)
	servedOnAsOne(t, a, b)
	if _, err := a.WaitLog(ctx(t), "the checkout is gone from "+dir, "its server serves the clients it has on"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the old path was made again: %v", err)
	}
	c := shared(t, moved)
	initialize(t, c, "gemini-cli")
	attached(t, c)
	if board := peersOf(t, c); board.Count != 3 {
		t.Fatalf("where the checkout is now, the board: %+v", board)
	}
}

// A moved checkout's server keeps its history bounded: it writes its
// journal afresh where the journal is now, by the lease there, which still
// names it (at the old path, where nothing is, it grew by every call until
// a successor found it over its bound and set it aside). Killed, its
// successor where the checkout is now has the history.
func TestAMovedCheckoutsHistoryIsWrittenAfreshWhereItIsNow(t *testing.T) {
	_, moved, a, b := servedThenMoved(t)
	const calls = 2100 // past the records a journal grows by before it is written afresh
	for range calls {
		call(t, b, "majordomus_list", nil)
	}
	raw, err := os.ReadFile(statePath(moved))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(raw), "\n"); lines >= calls {
		t.Fatalf("the moved journal holds %d lines after %d calls: never written afresh", lines, calls)
	}
	if n := a.CountLogs("writing the checkout's shared state"); n != 0 {
		t.Fatalf("the server's state was not written:\n%s", strings.Join(a.Logs(), "\n"))
	}
	if err := a.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	c := shared(t, moved)
	initialize(t, c, "gemini-cli")
	serverURL(t, c)
	if got := executionsOf(t, c); len(got) != 1000 || got[0].Tool != "majordomus_list" || c.CountLogs("set aside") != 0 {
		t.Fatalf("the successor has %d executions (the newest %+v)", len(got), got[:min(len(got), 1)])
	}
}

// A checkout moved while served (mv), and another made at its old path
// (a clone there), is that path's checkout to the processes started
// there: hosts keep a checkout's path, and their agents write by it. The
// moved server, reading its lease by the path, finds it is not its own
// there and gives it up; its clients move to the path's server at their
// next message, and share one board with whoever edits the same files.
func TestAMovedCheckoutsClientsFollowItsPath(t *testing.T) {
	dir, _, a, b := servedThenMoved(t)
	if err := example.WriteCheckout(dir); err != nil {
		t.Fatal(err)
	}
	c := shared(t, dir)
	// Before the first is put back, the clone goes, and first whoever may
	// serve it: a server there saving its state as RemoveAll walks would
	// leave part of the clone behind, and the first could not be put back.
	t.Cleanup(func() {
		for _, p := range []*mcpclient.Process{a, b, c} {
			p.Kill(context.Background())
		}
		_ = os.RemoveAll(dir)
	})
	initialize(t, c, "gemini-cli")
	// Each next message moves its client: its own server's, or its
	// bridge's, reading of the lease at the path finds it is not theirs.
	call(t, a, "majordomus_list", nil)
	call(t, b, "majordomus_list", nil)
	if _, err := a.WaitLog(ctx(t), "the lease is no longer this server's"); err != nil {
		t.Fatal(err)
	}
	want := boardIDs(peersOf(t, c))
	for _, p := range []*mcpclient.Process{a, b} {
		if got := boardIDs(peersOf(t, p)); len(want) != 3 || !slices.Equal(got, want) {
			t.Fatalf("boards apart: %v and %v", got, want)
		}
	}
}

// boardIDs are the ids of the peers on b, attached or not, sorted.
func boardIDs(b boardView) []string {
	var ids []string
	for _, p := range b.Peers {
		ids = append(ids, p.ID)
	}
	slices.Sort(ids)
	return ids
}

// servedThenMoved serves a checkout to a, its leaseholder, and b, bridged
// to it, then moves it (mv) to its path and "-moved"; it is put back at
// the end, as the checkout's own cleanup finds it.
func servedThenMoved(t *testing.T) (dir, moved string, a, b *mcpclient.Process) {
	t.Helper()
	dir = checkoutTimed(t, "  busy_grace_seconds: 3\n")
	a = shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b = shared(t, dir)
	initialize(t, b, "codex")
	attached(t, b)
	moved = dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Rename(moved, dir) })
	return dir, moved, a, b
}

// servedOnAsOne checks that a, the leaseholder, and b, bridged to it, are
// still answered, from one board that holds them both, and neither went
// alone.
func servedOnAsOne(t *testing.T, a, b *mcpclient.Process) {
	t.Helper()
	call(t, b, "majordomus_list", nil)
	if x, y := peersOf(t, a), peersOf(t, b); x.Count != 2 || y.Count != 2 || x.Caller == y.Caller {
		t.Fatalf("the boards: %+v and %+v", x, y)
	}
	for _, p := range []*mcpclient.Process{a, b} {
		if n := p.CountLogs(servedAlone); n != 0 {
			t.Fatalf("a client went alone:\n%s", strings.Join(p.Logs(), "\n"))
		}
	}
}

// The checkout's .ai moved away while served (mv .ai .ai-gone) is not
// made again in its place, and its server serves on: moving it back
// works, and a new client there shares that server.
func TestAMovedLayerIsNotMadeAgainAndMovesBack(t *testing.T) {
	dir := checkoutTimed(t, "  busy_grace_seconds: 3\n")
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")

	layer, away := filepath.Join(dir, ".ai"), filepath.Join(dir, ".ai-gone")
	if err := os.Rename(layer, away); err != nil {
		t.Fatal(err)
	}
	servedOnAsOne(t, a, b)
	if _, err := a.WaitLog(ctx(t), "the checkout is gone from "+dir, "its server serves the clients it has on"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(layer); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s was made again: %v", layer, err)
	}
	if err := os.Rename(away, layer); err != nil {
		t.Fatalf("moving .ai back: %v", err)
	}
	c := shared(t, dir)
	initialize(t, c, "gemini-cli")
	attached(t, c)
	if board := peersOf(t, a); board.Count != 3 {
		t.Fatalf("moved back, the board: %+v", board)
	}
}

// Two checkouts that share one .ai (a link in each to the same directory)
// share its lease file too: a client of the second, finding the first's
// server holding it, is served alone, saying why, and tries again as
// alone does, never taking it over: each take-over would be taken back,
// every busy grace, stalling both checkouts' boards.
func TestACheckoutSharingAnotherCheckoutsAIIsServedAloneWithoutAWar(t *testing.T) {
	first := checkoutTimed(t, "  busy_grace_seconds: 3\n")
	a := shared(t, first)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	second := filepath.Join(t.TempDir(), "second")
	if err := os.Mkdir(second, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(first, ".ai"), filepath.Join(second, ".ai")); err != nil {
		t.Fatal(err)
	}
	b := shared(t, second, "--join-retry", "500ms", "--log-level", "debug")
	initialize(t, b, "codex")
	if reason := logField(t, b, servedAlone, "reason"); !strings.Contains(reason, "this checkout's .ai is the checkout at "+strconv.Quote(first)+"'s too") {
		t.Fatalf("served alone because %q", reason)
	}
	// tried again past the busy grace, and again: never taken over
	if err := b.WaitLogs(ctx(t), 3, "still serving this client alone"); err != nil {
		t.Fatal(err)
	}
	call(t, b, "majordomus_list", nil)
	if n := b.CountLogs("taking it over"); n != 0 || a.CountLogs("the lease is no longer this server's") != 0 {
		t.Fatalf("the lease was taken over:\n%s", strings.Join(b.Logs(), "\n"))
	}
	if board := peersOf(t, a); board.Count != 1 {
		t.Fatalf("the first checkout's board: %+v", board)
	}
}

// A leaseholder whose .ai was removed serves on; when .ai comes back
// without its lease and a new client wins one there, it hears of it
// within a second or so, though no file event may tell (its watches went
// with the directory): two leaseholders of one checkout never last. (Or
// it saw .ai come back first, and the new client shares its server.)
func TestALeaseholderWhoseLayerCameBackWithoutItsLeaseYieldsAtOnce(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	layer, kept := filepath.Join(dir, ".ai"), filepath.Join(t.TempDir(), ".ai")
	copyTree(t, layer, kept, false) // modes kept, whatever the umask
	if err := os.RemoveAll(filepath.Join(kept, "local")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(layer); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "the checkout is gone from "+dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(kept, layer); err != nil { // restored, as from a backup
		t.Fatal(err)
	}
	yielded := a.CountLogs("the lease is no longer this server's") // it may have seen .ai back, and won the lease again
	c := shared(t, dir)
	initialize(t, c, "codex")
	line, err := c.WaitLogAny(ctx(t), "shared server listening on", "bridging this stdio session")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, "shared server listening on") {
		if err := a.WaitLogs(ctx(t), yielded+1, "the lease is no longer this server's"); err != nil {
			t.Fatal(err)
		}
	}
}

// A checkout moved while served (mv), with something made at its old path
// since (here an empty directory: the server takes its checkout for gone
// and serves on), is still served by that server: a client started where
// the checkout is now finds its lease written in this very directory (its
// id, which mv keeps), and attaches. (It took the lease for a copy's,
// waited the busy grace, and started a second server for the checkout
// beside the first.)
func TestAMovedCheckoutWithSomethingAtItsOldPathKeepsOneServer(t *testing.T) {
	dir := checkoutTimed(t, "  busy_grace_seconds: 15\n")
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	url := serverURL(t, a)
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir); _ = os.Rename(moved, dir) }) // as the checkout's own cleanup finds it
	call(t, a, "majordomus_list", nil)
	if _, err := a.WaitLog(ctx(t), "the checkout is gone from "+dir); err != nil {
		t.Fatal(err)
	}
	d := shared(t, moved)
	initialize(t, d, "codex")
	attached(t, d, url)
	if board := peersOf(t, d); board.Count != 2 {
		t.Fatalf("the moved checkout's board: %+v", board)
	}
}
