package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A checkout is found from any directory in it, its manifest read; the
// command tells a bad profile, no checkout and a broken manifest apart by
// their faults.
func TestACheckoutIsFoundFromADirectoryInIt(t *testing.T) {
	want := exampleCheckout(t)
	sub := filepath.Join(want.Root, ".ai")
	co, err := Open(Flags{Repo: sub, Profile: "review"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(want.Root) // as the checkout is found
	if err != nil {
		t.Fatal(err)
	}
	if co.Root != root || co.Manifest.Name != "example" || co.Profile != "review" {
		t.Errorf("found %s (%q); want %s", co.Root, co.Manifest.Name, want.Root)
	}
	// The root directory's id is read as it is found: the fleet tells the
	// checkout a server serves by it, should the path name another later.
	if id := registry.DirectoryID(root); co.RootID == "" || co.RootID != id {
		t.Errorf("the root directory's id is %q; want %q", co.RootID, id)
	}

	if _, err := Open(Flags{Repo: sub, Profile: "../x"}, nil, nil); FaultOf(err) != FaultUsage {
		t.Errorf("with a bad profile: %v; want a usage fault", err)
	}
	if _, err := Open(Flags{Repo: testtemp.Dir(t)}, nil, nil); FaultOf(err) != FaultMissing {
		t.Errorf("outside a checkout: %v; want a missing fault", err)
	}
	if err := os.WriteFile(filepath.Join(want.Root, ".ai", "manifest.yaml"), []byte("schema: nothing/v0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Flags{Repo: sub}, nil, nil); FaultOf(err) != FaultContract || !errors.Is(err, layer.ErrInvalidManifest) {
		t.Errorf("with a broken manifest: %v; want a contract fault", err)
	}
}

// No manifest and no flag: the timings are the defaults their owner
// packages declare, which the flags' help shows.
func TestTheDefaultTimingsAreTheOwnersDefaults(t *testing.T) {
	want := Timings{
		BindGrace:     registry.DefaultBindGrace,
		ProbeTimeout:  registry.DefaultProbeTimeout,
		ElectionBound: machine.DefaultElectionBound,
		BusyGrace:     machine.DefaultBusyGrace,
		IdleTimeout:   wire.DefaultIdleTimeout,
		Heartbeat:     bridge.DefaultHeartbeat,
		JoinRetry:     machine.DefaultJoinRetry,
	}
	if got := DefaultFlags().Times; got != want {
		t.Errorf("DefaultFlags().Times = %+v, want %+v", got, want)
	}
}
