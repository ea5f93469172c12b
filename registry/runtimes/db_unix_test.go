//go:build unix

package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registry under a link that leads nowhere, or that is one, can hold
// no row: reading it is an error (the inventory is incomplete), never an
// empty inventory.
func TestARegistryUnderADanglingLinkIsUnusable(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone.db"), filepath.Join(dir, "registry.db")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "state", "majordomus-mcp", "registry.db"), filepath.Join(dir, "registry.db")} {
		if rows, err := Read(context.Background(), path); err == nil {
			t.Errorf("%s: Read answered %d rows and no error", path, len(rows))
		}
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "state", "majordomus-mcp", "registry.db")); err == nil {
		t.Error("Open succeeded under the link")
	}
}
