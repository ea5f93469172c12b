//go:build unix

package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registry under a link that leads nowhere, or that is one (into no
// directory, or through another link), can hold no row: reading it is an
// error (the inventory is incomplete), never an empty inventory.
func TestARegistryUnderADanglingLinkIsUnusable(t *testing.T) {
	dir := testtemp.Dir(t)
	for link, target := range map[string]string{
		"state":       filepath.Join(dir, "gone"),
		"registry.db": filepath.Join(dir, "gone", "registry.db"), // into no directory
		"chained.db":  filepath.Join(dir, "hop.db"),
		"hop.db":      filepath.Join(dir, "gone", "registry.db"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{filepath.Join(dir, "state", "majordomus-mcp", "registry.db"), filepath.Join(dir, "registry.db"), filepath.Join(dir, "chained.db")} {
		if rows, err := Read(context.Background(), path); err == nil {
			t.Errorf("%s: Read answered %d rows and no error", path, len(rows))
		}
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "state", "majordomus-mcp", "registry.db")); err == nil {
		t.Error("Open succeeded under the link")
	}
}

// A registry that is a link to a file not made yet is read as what it
// is, a link that leads nowhere, until a server makes the file through it:
// what cannot be read is never read as an empty inventory.
func TestARegistryThatIsALinkToAFileNotYetMadeIsReadOnceMade(t *testing.T) {
	dir := testtemp.Dir(t)
	path := filepath.Join(dir, "registry.db")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.db"), path); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(context.Background(), path); err == nil || !strings.Contains(err.Error(), "leads nowhere") {
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
