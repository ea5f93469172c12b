package scenarios

import (
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
