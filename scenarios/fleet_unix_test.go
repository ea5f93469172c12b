//go:build unix

package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A server started through a link named majordomus-mcp to a binary of
// another name (a versioned install) runs as that binary: the inventory
// still finds it listening, by the name its row recorded.
func TestFleetFindsAServerStartedThroughALink(t *testing.T) {
	dir, registry := fleetCheckout(t), filepath.Join(t.TempDir(), "registry.db")
	installed := filepath.Join(t.TempDir(), "mm-1.2.3")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(installed, b, 0o755); err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), "majordomus-mcp")
	if err := os.Symlink(installed, linked); err != nil {
		t.Fatal(err)
	}
	p, err := mcpclient.Start(linked, []string{"serve", "--http-port", "0", "--profile", "review"}, dir, fleetEnv(registry, "one"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Kill(ctx(t)) })
	if _, err := p.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	other := serveProfile(t, dir, registry, "one", "default")
	code, inv := fleet(t, dir, registry)
	if code != 0 || len(inv.RunningMembers) != 2 {
		t.Fatalf("exit %d, gate %v (%s), running %+v, stale %+v, unregistered %+v; want %v running",
			code, inv.MutationGateSatisfied, inv.blocked(), inv.RunningMembers, inv.StaleMembers, inv.UnregisteredProcesses, pids(p, other))
	}
}

// A checkout moved aside and made again at its path (a fresh clone): its
// server, started from elsewhere with --repo, names the old path in its
// row and its arguments, and serves the moved checkout. The checkout made
// again has no server until one starts there, and then exactly one; the
// moved checkout has its server, registered under another path: a binding
// mismatch, which keeps its gate closed.
func TestFleetTellsAMovedCheckoutFromTheOneMadeAtItsPath(t *testing.T) {
	dir, registry := checkout(t), filepath.Join(t.TempDir(), "registry.db")
	old := startEnv(t, t.TempDir(), fleetEnv(registry, "one"), "serve", "--http-port", "0", "--repo", dir)
	if _, err := old.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	if code, inv := fleet(t, dir, registry); code != 0 {
		t.Fatalf("before the move: exit %d (%s)", code, inv.blocked())
	}
	moved := dir + "-moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	copyExample(t, dir)

	if code, inv := fleet(t, dir, registry); code != 10 || len(inv.RunningMembers) != 0 || len(inv.MissingMembers) != 1 || len(inv.BindingMismatches) != 0 {
		t.Fatalf("made again, with no server of its own: exit %d (%s), running %+v, missing %+v, mismatches %+v; want its profile missing",
			code, inv.blocked(), inv.RunningMembers, inv.MissingMembers, inv.BindingMismatches)
	}
	own := serveProfile(t, dir, registry, "one", "default")
	if code, inv := fleet(t, dir, registry); code != 0 || len(inv.RunningMembers) != 1 || inv.RunningMembers[0].PID != pids(own)[0] {
		t.Fatalf("made again, with a server of its own: exit %d (%s), running %+v; want %d alone", code, inv.blocked(), inv.RunningMembers, pids(own)[0])
	}
	code, inv := fleet(t, moved, registry)
	if m := inv.BindingMismatches; code != 10 || len(m) != 1 || m[0].PID != pids(old)[0] || !strings.Contains(m[0].Detail, `registered for root "`+dir+`"`) {
		t.Fatalf("moved: exit %d (%s), binding mismatches %+v; want %d's, naming the old path", code, inv.blocked(), m, pids(old)[0])
	}
}

// A stopped server (SIGSTOP, a debugger) is still its profile's member,
// yet it answers nothing: the inventory is incomplete, saying so, and the
// gate closed, until it is continued.
func TestFleetSaysAStoppedServerAnswersNothing(t *testing.T) {
	dir, registry := checkout(t), filepath.Join(t.TempDir(), "registry.db")
	p := startEnv(t, dir, fleetEnv(registry, "one"), "serve", "--http-port", "0")
	if _, err := p.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	if code, inv := fleet(t, dir, registry); code != 0 {
		t.Fatalf("serving: exit %d (%s)", code, inv.blocked())
	}
	stop(t, p)
	code, inv := fleet(t, dir, registry)
	if code != 10 || inv.InventoryComplete || inv.blocked() != "process_stopped" || len(inv.RunningMembers) != 1 ||
		!strings.Contains(inv.IncompleteReasons[0].Detail, fmt.Sprintf("default (pid %d)", pids(p)[0])) {
		t.Fatalf("stopped: exit %d, complete %v, blocked %q, running %+v, reasons %+v", code, inv.InventoryComplete, inv.blocked(), inv.RunningMembers, inv.IncompleteReasons)
	}
	if err := p.Signal(syscall.SIGCONT); err != nil { // it runs again as the signal is sent
		t.Fatal(err)
	}
	if code, inv := fleet(t, dir, registry); code != 0 {
		t.Fatalf("continued: exit %d (%s)", code, inv.blocked())
	}
}
