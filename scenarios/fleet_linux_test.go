package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A server whose file was removed (an upgrade, an uninstall) before it
// registered, as one that took over after the file went does, is the
// running member it is, its row naming the process it is. (Its row carried
// no start time and no boot, since its file could no longer be read: the
// inventory listed it as an unregistered process beside a stale row of
// another boot, and closed the gate for the server's whole life.)
func TestFleetCountsAServerWhoseFileWasRemovedBeforeItRegistered(t *testing.T) {
	dir, registry := fleetCheckout(t), filepath.Join(t.TempDir(), "registry.db")
	first := serveProfile(t, dir, registry, "one", "default")
	installed := binaryCopy(t)
	second, err := mcpclient.Start(installed, []string{"--http-port", "0"}, dir, fleetEnv(registry, "one"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		second.Kill(ctx(t))
		if t.Failed() {
			t.Logf("stderr of the server whose file was removed:\n%s", strings.Join(second.Logs(), "\n"))
		}
	})
	initialize(t, second, "codex")
	attached(t, second)
	if err := os.Remove(installed); err != nil {
		t.Fatal(err)
	}
	first.Signal(syscall.SIGTERM)
	first.Wait(ctx(t))
	if _, err := second.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	code, inv := fleet(t, dir, registry) // the profile review is missing: nothing serves it
	if len(inv.RunningMembers) != 1 || inv.RunningMembers[0].PID != second.Cmd.Process.Pid || len(inv.StaleMembers)+len(inv.UnregisteredProcesses) != 0 {
		t.Fatalf("exit %d, gate %v (%s), running %+v, stale %+v, unregistered %+v; want pid %d running alone",
			code, inv.MutationGateSatisfied, inv.blocked(), inv.RunningMembers, inv.StaleMembers, inv.UnregisteredProcesses, second.Cmd.Process.Pid)
	}
}
