//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
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
// again has no server, and the moved one a server registered under
// another path: neither gate opens, and each says why.
func TestFleetTellsAMovedCheckoutFromTheOneMadeAtItsPath(t *testing.T) {
	dir, registry := checkout(t), filepath.Join(t.TempDir(), "registry.db")
	p := startEnv(t, t.TempDir(), fleetEnv(registry, "one"), "serve", "--http-port", "0", "--repo", dir)
	if _, err := p.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
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

	saysWhy := func(where, says string) {
		t.Helper()
		code, inv := fleet(t, where, registry)
		m := inv.BindingMismatches
		if code != 10 || inv.MutationGateSatisfied || len(m) != 1 || m[0].PID != p.Cmd.Process.Pid || !strings.Contains(m[0].Detail, says) {
			t.Fatalf("fleet in %s: exit %d, gate %v (%s), binding mismatches %+v; want its server's, saying %q",
				where, code, inv.MutationGateSatisfied, inv.blocked(), m, says)
		}
	}
	saysWhy(dir, "was moved or removed")
	saysWhy(moved, `registered for root "`+dir+`"`)
}
