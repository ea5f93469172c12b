package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// A row that records no boot id (changed by other hands) names a process
// that runs, exactly as it recorded it: this test process. Read from a
// real registry and judged against the real host, it is not provably gone
// (Register itself never prunes it: proc.Env.OfAnotherBoot("") is false),
// so the inventory is incomplete (docs/fleet.md: anything unknown), never a row
// of "another boot" that leaves the gate to the rest.
func TestARowWithoutABootIDOfARunningProcessIsNotGone(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	start, err := proc.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	root := testtemp.Dir(t)
	row := testRow("no-boot", "default", os.Getpid())
	row.RepositoryRoot, row.RepositoryID = root, "id-of-root"
	row.ProcessStart, row.BootID, row.RegisteredTicks = start, "", start+1
	register(t, path, proc.Env{}, row)
	// a registration beside it, of the same slot, leaves it: it is not gone
	other := testRow("other", "default", 1<<22+7) // no such pid
	other.RepositoryRoot, other.RepositoryID, other.BootID = root, "id-of-root", mustBoot(t)
	register(t, path, proc.Env{}, other)
	if rows := readRows(t, path); len(rows) != 2 || rows[0].RuntimeID != "no-boot" {
		t.Fatalf("rows after a registration beside it: %+v", rows)
	}

	inv := fleet.Classify(Collect(context.Background(), Scope{
		Root: root, RepositoryID: "id-of-root", Roster: []fleet.Configured{{Profile: "default"}},
		Registry: path, ServerNames: []string{"majordomus-mcp"},
	}))
	var reason string
	for _, s := range inv.StaleMembers {
		if s.RuntimeID == "no-boot" {
			reason = s.Reason
		}
	}
	if reason != fleet.StaleUnverifiable || inv.InventoryComplete {
		t.Errorf("complete %v, stale %+v, blocked %+v", inv.InventoryComplete, inv.StaleMembers, inv.BlockedReasons)
	}
}

func mustBoot(t *testing.T) string {
	t.Helper()
	id, err := proc.BootID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}
