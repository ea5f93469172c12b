package runtimes

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A registration writes its row, marks it draining, and removes it, each
// write seen by a reader of the real database.
func TestARegistrationFromWriteToRemoval(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "state", "registry.db")
	reg, err := Register(ctx, path, testRow("r1", "default", 4242))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Read(ctx, path)
	if err != nil || len(rows) != 1 || rows[0].RuntimeID != "r1" || rows[0].State != StateLeaseholder {
		t.Fatalf("after Register: %+v (%v)", rows, err)
	}

	marked := make(chan error, 1)
	reg.MarkLost(time.Now(), func(err error) { marked <- err })
	select {
	case err := <-marked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("MarkLost never reported")
	}
	if rows, err := Read(ctx, path); err != nil || len(rows) != 1 || rows[0].State != StateLeaseLost {
		t.Fatalf("after MarkLost: %+v (%v)", rows, err)
	}

	if err := reg.Remove(); err != nil {
		t.Fatal(err)
	}
	if rows, err := Read(ctx, path); err != nil || len(rows) != 0 {
		t.Fatalf("after Remove: %+v (%v)", rows, err)
	}
}

// Remove waits for a state change still being written, so that the row
// is not written back after its removal.
func TestRemoveWaitsForAPendingStateChange(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	reg, err := Register(ctx, path, testRow("r1", "default", 4242))
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	reg.MarkLost(time.Now(), func(error) { reported = true })
	if err := reg.Remove(); err != nil {
		t.Fatal(err)
	}
	if !reported {
		t.Fatal("Remove returned before the pending state change was written")
	}
	if rows, err := Read(ctx, path); err != nil || len(rows) != 0 {
		t.Fatalf("after Remove: %+v (%v)", rows, err)
	}
}

// A registry that cannot be written is an error the caller can log.
func TestAnUnwritableRegistryIsAnError(t *testing.T) {
	dir := testtemp.Dir(t)
	file := filepath.Join(dir, "file")
	if err := writeFile(file); err != nil {
		t.Fatal(err)
	}
	if _, err := Register(context.Background(), filepath.Join(file, "registry.db"), testRow("r1", "default", 1)); err == nil {
		t.Fatal("a registry under a regular file was written")
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("not a directory"), 0o600) }
