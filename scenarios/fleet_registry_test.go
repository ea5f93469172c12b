package scenarios

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/example"

	_ "modernc.org/sqlite"
)

// F1: a registry row that cannot be read (its pid made text by other
// hands) hides no other row: the inventory counts the servers whose rows
// it reads, names the row it could not, and stays closed. A server of its
// profile (its own killed with -9) registers beside it, and leaves it be:
// it cannot tell whether that row's process is gone.
func TestFleetReadsEveryRowButTheOneGarbled(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "registry.db")
	killed := serveProfile(t, dir, registry, "c1", "default")
	serveProfile(t, dir, registry, "c1", "review")
	db, err := sql.Open("sqlite", "file:"+registry)
	if err != nil {
		t.Fatal(err)
	}
	var garbled string
	err = db.QueryRowContext(ctx(t), `UPDATE server_runtimes SET pid = 'pid ' || pid WHERE profile = 'default' RETURNING runtime_id`).Scan(&garbled)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	killed.Kill(ctx(t))
	next := serveProfile(t, dir, registry, "c1", "default") // it prunes its profile's rows of processes gone

	code, inv := fleet(t, dir, registry)
	unreadable := slices.ContainsFunc(inv.IncompleteReasons, func(r reason) bool {
		return r.Code == "registry_unreadable" && strings.Contains(r.Detail, garbled)
	})
	if code != 10 || inv.InventoryComplete || !unreadable || len(inv.RunningMembers) != 2 || !slices.ContainsFunc(inv.RunningMembers, func(m member) bool { return m.PID == pids(next)[0] }) {
		t.Fatalf("exit %d, complete %v, incomplete %+v, running %+v; want two servers running, %d among them, and the row %s named unreadable",
			code, inv.InventoryComplete, inv.IncompleteReasons, inv.RunningMembers, pids(next)[0], garbled)
	}
}

// F1: a registry write that another program left cut off (killed -9 in
// the middle of a write in rollback-journal mode) hides no row from an
// inventory asked with no server running: fleet rolls the write back, as
// any SQLite client that may write does, and counts the killed server's
// row stale. (It answered "registry_unreadable: attempt to write a
// readonly database" until some server registered again.)
func TestFleetReadsARegistryWhoseWriterWasKilledMidWrite(t *testing.T) {
	dir := fleetCheckout(t)
	registry := filepath.Join(t.TempDir(), "registry.db")
	killed := serveProfile(t, dir, registry, "c1", "default")
	killed.Kill(ctx(t))
	cutOff := filepath.Join(t.TempDir(), "registry.db")
	copyWithWriteCutOff(t, registry, cutOff)

	code, inv := fleet(t, dir, cutOff, "--roster", "default")
	if code != 10 || !inv.InventoryComplete || len(inv.StaleMembers) != 1 || inv.StaleMembers[0].PID != pids(killed)[0] {
		t.Fatalf("exit %d, complete %v, incomplete %+v, stale %+v; want the killed server %d's row read, stale",
			code, inv.InventoryComplete, inv.IncompleteReasons, inv.StaleMembers, pids(killed)[0])
	}
	if _, err := os.Stat(cutOff + "-journal"); !os.IsNotExist(err) {
		t.Errorf("the write cut off was not rolled back: its journal is still there (%v)", err)
	}
}

// copyWithWriteCutOff copies the registry at from to to as a writer in
// rollback-journal mode leaves it when it is killed in the middle of a
// write: the write's pages in the file, and its journal, hot, beside it.
// The write itself is rolled back.
func copyWithWriteCutOff(t *testing.T, from, to string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+from)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{
		"PRAGMA journal_mode=DELETE", "PRAGMA cache_size=1", "BEGIN IMMEDIATE",
		"UPDATE server_runtimes SET runtime_id = 'phantom'", "CREATE TABLE pad(x)",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for range 2000 {
		if _, err := db.Exec("INSERT INTO pad VALUES (?)", strings.Repeat("x", 500)); err != nil {
			t.Fatal(err)
		}
	}
	for _, suffix := range []string{"", "-journal"} {
		b, err := os.ReadFile(from + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("ROLLBACK"); err != nil {
		t.Fatal(err)
	}
}

// F1: the rows of servers killed with -9 whose checkouts are gone since (a
// task's worktree removed, a checkout moved away) are evidence for no
// inventory, and no server will register at their paths again: the next
// registration, in any checkout, removes them, and keeps the row of a
// server that still runs in a removed checkout. (They stayed until the
// machine rebooted, one more for every such server; the moved checkout's
// inventory listed its dead server's row for as long.)
func TestFleetRowsOfKilledServersOfGoneCheckoutsDoNotPileUp(t *testing.T) {
	registry := filepath.Join(t.TempDir(), "registry.db")
	removed, moved := filepath.Join(t.TempDir(), "worktree"), filepath.Join(t.TempDir(), "checkout")
	removedLive := filepath.Join(t.TempDir(), "worktree")
	for _, dir := range []string{removed, moved, removedLive} {
		if err := example.WriteCheckout(dir); err != nil {
			t.Fatal(err)
		}
	}
	serveProfile(t, removed, registry, "c1", "default").Kill(ctx(t))
	serveProfile(t, moved, registry, "c1", "default").Kill(ctx(t))
	running := serveProfile(t, removedLive, registry, "c1", "default") // its row stays while it runs
	for _, dir := range []string{removed, removedLive} {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(moved, moved+"-moved"); err != nil {
		t.Fatal(err)
	}
	moved += "-moved"
	live := serveProfile(t, moved, registry, "c1", "default")

	db, err := sql.Open("sqlite", "file:"+registry+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []int
	query, err := db.QueryContext(ctx(t), `SELECT pid FROM server_runtimes ORDER BY pid`)
	if err != nil {
		t.Fatal(err)
	}
	for query.Next() {
		var pid int
		if err := query.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, pid)
	}
	if err := query.Err(); err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values(pids(running, live))); !slices.Equal(rows, want) {
		t.Errorf("the registry holds the rows of pids %v, want only the live servers' %v", rows, want)
	}
	if code, inv := fleet(t, moved, registry); code != 0 || len(inv.StaleMembers) != 0 {
		t.Errorf("the moved checkout: exit %d (%s), stale %+v; want its server alone", code, inv.blocked(), inv.StaleMembers)
	}
}
