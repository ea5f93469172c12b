//go:build unix

package scenarios

import (
	"os"
	"path/filepath"
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
