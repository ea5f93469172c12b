package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// A checkout is found from any directory in it, its manifest read; the
// command tells no checkout and a broken manifest apart by their errors.
func TestACheckoutIsFoundFromADirectoryInIt(t *testing.T) {
	want := exampleCheckout(t)
	sub := filepath.Join(want.Root, ".ai")
	co, err := FindCheckout(sub)
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.EvalSymlinks(want.Root) // as the checkout is found
	if err != nil {
		t.Fatal(err)
	}
	if co.Root != root || co.Manifest.Name != "example" {
		t.Errorf("found %s (%q); want %s", co.Root, co.Manifest.Name, want.Root)
	}

	if _, err := FindCheckout(testtemp.Dir(t)); !errors.Is(err, ErrNoCheckout) {
		t.Errorf("outside a checkout: %v; want ErrNoCheckout", err)
	}
	if err := os.WriteFile(filepath.Join(want.Root, ".ai", "manifest.yaml"), []byte("schema: nothing/v0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := FindCheckout(sub); !errors.Is(err, ErrInvalidManifest) {
		t.Errorf("with a broken manifest: %v; want ErrInvalidManifest", err)
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
		IdleTimeout:   transport.DefaultIdleTimeout,
		Heartbeat:     transport.DefaultHeartbeat,
		JoinRetry:     machine.DefaultJoinRetry,
	}
	if got := DefaultTimings(); got != want {
		t.Errorf("DefaultTimings = %+v, want %+v", got, want)
	}
}
