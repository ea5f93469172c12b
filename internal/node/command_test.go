package node

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
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

// No manifest and no flag: the timings are their owners' defaults.
func TestTheDefaultTimingsAreTheOwnersDefaults(t *testing.T) {
	def := DefaultTimings()
	if def.ProbeTimeout <= 0 || def.IdleTimeout <= 0 || def.Heartbeat <= 0 || def.BindGrace <= 0 || def.ElectionBound <= 0 || def.BusyGrace <= 0 || def.JoinRetry <= 0 {
		t.Errorf("a default timing is unset: %+v", def)
	}
}
