package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// F1: a server registers the role the manifest gives its profile when it
// registers. The role edited while the checkout is served is a
// role_mismatch, and docs/fleet.md says to restart the server: once its
// leaseholder ends, the bridge that takes over registers anew, after the
// edit, and its row carries the role the manifest gives now, not the one
// it read when its own client started.
func TestFleetRegistersTheRoleTheManifestGivesAtATakeOver(t *testing.T) {
	dir := checkout(t)
	manifest := filepath.Join(dir, ".ai/manifest.yaml")
	roster := "schema: ai-repository/v1\nname: example\nmcp:\n  profiles:\n    - {name: default, role: shared}\n"
	if err := os.WriteFile(manifest, []byte(roster), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	registry := filepath.Join(t.TempDir(), "registry.db")
	holder := startEnv(t, dir, fleetEnv(registry, "c1"), "--http-port", "0")
	initialize(t, holder, "claude-code")
	serverURL(t, holder)
	if _, err := holder.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	bridge := startEnv(t, dir, fleetEnv(registry, "c1"), "--http-port", "0")
	initialize(t, bridge, "codex")
	attached(t, bridge)

	if err := os.WriteFile(manifest, []byte(strings.Replace(roster, "role: shared", "role: lead", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	if code, inv := fleet(t, dir, registry, "--repo", dir); code != 10 || inv.blocked() != "role_mismatch" {
		t.Fatalf("the role edited under its server: exit %d, %+v", code, inv)
	}

	// Restarted as docs/fleet.md says: the leaseholder ends, and the
	// bridge serves the checkout in its place, registered after the edit.
	holder.Signal(syscall.SIGTERM)
	if _, err := bridge.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if _, err := bridge.WaitLog(ctx(t), "registered this server in the fleet registry"); err != nil {
		t.Fatal(err)
	}
	holder.Wait(ctx(t))
	code, inv := fleet(t, dir, registry, "--repo", dir)
	if inv.blocked() == "role_mismatch" {
		t.Fatalf("a server registered after the role was edited registered the role its process read at its start: exit %d, %+v", code, inv)
	}
	if code != 0 || len(inv.RunningMembers) != 1 || inv.RunningMembers[0].PID != pids(bridge)[0] {
		t.Fatalf("the server after the take-over: exit %d, %+v", code, inv)
	}
}
