//go:build unix

package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registry under a link that leads nowhere can hold no row: reading it
// is an error (the inventory is incomplete), never an empty inventory.
func TestARegistryUnderADanglingLinkIsUnusable(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state", "majordomus-mcp", "registry.db")
	if _, err := Open(context.Background(), path); err == nil {
		t.Error("Open succeeded")
	}
	if rows, err := Read(context.Background(), path); err == nil {
		t.Errorf("Read answered %d rows and no error", len(rows))
	}
}
