package runtimes

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
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

// One directory reached by two paths, neither a link (a bind mount; here
// /proc/self/root, which needs no privilege): a server registered by one
// path, asked about from the other, is this checkout's server, bound
// right. This test process is that server: it listens, and its row, in a
// real registry, names it as it runs. Once the checkout has moved away
// from the path it registered, it is bound wrong.
func TestAServerOfThisDirectoryRegisteredByAnotherPathIsBoundRight(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	root := filepath.Join(testtemp.Dir(t), "checkout")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	start, err := proc.ProcessStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	row := testRow("served", "default", os.Getpid())
	row.RepositoryRoot, row.RepositoryID, row.RepositoryDir = root, "id-of-root", registry.DirectoryID(root)
	row.ProcessStart, row.BootID, row.RegisteredTicks = start, mustBoot(t), start+1
	row.PIDNamespace, row.Executable, row.URL = proc.PIDNamespace(), exe, "http://"+l.Addr().String()
	register(t, path, proc.Env{}, row)

	inventory := func(root string) fleet.Inventory {
		return fleet.Classify(Collect(context.Background(), Scope{
			Root: root, RepositoryID: "id-of-" + root, Roster: []fleet.Configured{{Profile: "default"}},
			Registry: path, ServerNames: []string{"majordomus-mcp"},
		}))
	}
	other := "/proc/self/root" + root
	if inv := inventory(other); len(inv.RunningMembers) != 1 || len(inv.RepositoryBindingMismatches) != 0 || !inv.MutationGateSatisfied {
		t.Errorf("asked from %s: running %+v, mismatches %+v, blocked %+v; want this process, bound right",
			other, inv.RunningMembers, inv.RepositoryBindingMismatches, inv.BlockedReasons)
	}
	moved := root + "-moved"
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	if inv := inventory(moved); len(inv.RepositoryBindingMismatches) != 1 || !strings.Contains(inv.RepositoryBindingMismatches[0].Detail, root) {
		t.Errorf("moved: mismatches %+v, blocked %+v; want this process, registered under the old path", inv.RepositoryBindingMismatches, inv.BlockedReasons)
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

// A row whose root directory's id is of another device (a network
// filesystem mounted again numbers its device anew) tells nothing by that
// id, and the path decides: a row of a server that exited, registered by
// another path to this directory (a bind mount; here /proc/self/root), is
// this checkout's, and stale, as it is when the device kept its number.
func TestARowOfARenumberedDeviceByAnotherPathIsThisCheckouts(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	root := filepath.Join(testtemp.Dir(t), "checkout")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	device, inode, ok := strings.Cut(registry.DirectoryID(root), ":")
	if !ok {
		t.Fatalf("no directory id for %s", root)
	}
	other := "/proc/self/root" + root
	row := testRow("exited", "default", 1<<22+7) // no such pid
	row.RepositoryRoot, row.RepositoryID = other, "id-of-"+other
	row.RepositoryDir = device + "1:" + inode // another device's number
	row.BootID = mustBoot(t)
	register(t, path, proc.Env{}, row)

	inv := fleet.Classify(Collect(context.Background(), Scope{
		Root: root, RepositoryID: "id-of-" + root, Roster: []fleet.Configured{{Profile: "default"}},
		Registry: path, ServerNames: []string{"majordomus-mcp"},
	}))
	if len(inv.StaleMembers) != 1 || inv.StaleMembers[0].RuntimeID != "exited" {
		t.Errorf("stale %+v; want the row registered by %s, of this directory", inv.StaleMembers, other)
	}
}
