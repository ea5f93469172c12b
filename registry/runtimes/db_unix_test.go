//go:build unix

package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registry under a link that leads nowhere, or that is one into no
// directory, can hold no row: reading it is an error (the inventory is
// incomplete), never an empty inventory.
func TestARegistryUnderADanglingLinkIsUnusable(t *testing.T) {
	dir := testtemp.Dir(t)
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone", "registry.db"), filepath.Join(dir, "registry.db")); err != nil { // into no directory
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

// A registry that is a link to a file not made yet, in a directory that
// is there, is one no server registered in yet: read as empty, and made
// through the link by the first that does.
func TestARegistryThatIsALinkToAFileNotYetMadeIsEmpty(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "registry.db")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), path); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(context.Background(), path); err != nil || len(rows) != 0 {
		t.Fatalf("before any server: %d rows, %v", len(rows), err)
	}
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open through the link: %v", err)
	}
	db.Close()
	if _, err := Read(context.Background(), path); err != nil {
		t.Fatalf("once made: %v", err)
	}
}
