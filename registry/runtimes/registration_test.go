package runtimes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// registered is Register, waited for.
func registered(t *testing.T, path string, row fleet.Row) (*Registration, error) {
	t.Helper()
	written := make(chan error, 1)
	reg := Register(path, row, func(err error) { written <- err })
	select {
	case err := <-written:
		return reg, err
	case <-time.After(10 * time.Second):
		t.Fatal("Register never reported")
		return nil, nil
	}
}

// A registration writes its row, marks it draining, and removes it, each
// write seen by a reader of the real database.
func TestARegistrationFromWriteToRemoval(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "state", "registry.db")
	reg, err := registered(t, path, testRow("r1", "default", 4242))
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

	if removed, err := reg.Remove(); err != nil || !removed {
		t.Fatalf("Remove: %t, %v", removed, err)
	}
	if rows, err := Read(ctx, path); err != nil || len(rows) != 0 {
		t.Fatalf("after Remove: %+v (%v)", rows, err)
	}
}

// Writes happen in the order asked, each after the one before has ended:
// the state change after the row, the removal after the change, so that
// the row is not written back after its removal. Nothing is waited for
// but Remove.
func TestWritesHappenInTheOrderAsked(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	var order []string
	var mu sync.Mutex
	note := func(what string) func(error) {
		return func(err error) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, fmt.Sprintf("%s %v", what, err))
		}
	}
	reg := Register(path, testRow("r1", "default", 4242), note("registered"))
	reg.MarkLost(time.Now(), note("marked"))
	if removed, err := reg.Remove(); err != nil || !removed {
		t.Fatalf("Remove: %t, %v", removed, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"registered <nil>", "marked <nil>"}; !slices.Equal(order, want) {
		t.Fatalf("the writes ended as %q, want %q", order, want)
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
	reg, err := registered(t, filepath.Join(file, "registry.db"), testRow("r1", "default", 1))
	if err == nil {
		t.Fatal("a registry under a regular file was written")
	}
	// Nothing follows a row that was not written: no change is reported,
	// and there is nothing to remove.
	reg.MarkLost(time.Now(), func(err error) { t.Errorf("a change of a row never written was tried: %v", err) })
	if removed, err := reg.Remove(); removed || err != nil {
		t.Fatalf("Remove of a row never written: %t, %v", removed, err)
	}
}

// A row that could not be written is tried again until it is: the
// registry's place taken for a while (a directory there) costs the server
// its row only for that while. Removed meanwhile, it is tried no more.
func TestARowThatFailedIsTriedAgain(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "registry.db")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	heard := make(chan error, 2)
	reg := Register(path, testRow("r1", "default", 1), func(err error) { heard <- err })
	if err := <-heard; err == nil {
		t.Fatal("a row was written into a directory")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-heard:
		if err != nil {
			t.Fatalf("tried again: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the row was never tried again")
	}
	if removed, err := reg.Remove(); !removed || err != nil {
		t.Fatalf("Remove of the row written at last: %t, %v", removed, err)
	}

	blocked := filepath.Join(testtemp.Dir(t), "registry.db")
	if err := os.Mkdir(blocked, 0o700); err != nil {
		t.Fatal(err)
	}
	reg = Register(blocked, testRow("r2", "default", 1), func(err error) { heard <- err })
	if err := <-heard; err == nil {
		t.Fatal("a row was written into a directory")
	}
	if removed, err := reg.Remove(); removed || err != nil { // at once, not after the next try
		t.Fatalf("Remove of a row never written: %t, %v", removed, err)
	}
	if len(heard) != 0 {
		t.Fatalf("tried again after its removal: %v", <-heard)
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("not a directory"), 0o600) }

// A registry deleted under a registered server (an operator clearing it)
// stays deleted: its row went with it, and neither the change of state nor
// the removal makes it again. (Both wrote a new, empty registry, and the
// removal said it removed the row.)
func TestARegistryDeletedStaysDeleted(t *testing.T) {
	dir := filepath.Join(testtemp.Dir(t), "state")
	path := filepath.Join(dir, "registry.db")
	reg, err := registered(t, path, testRow("r1", "default", 4242))
	if err != nil {
		t.Fatal(err)
	}
	if err := testtemp.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	reg.MarkLost(time.Now(), func(err error) { t.Errorf("a change of a row in a deleted registry was tried: %v", err) })
	if removed, err := reg.Remove(); removed || err != nil {
		t.Fatalf("Remove from a deleted registry: %t, %v", removed, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the deleted registry's directory is back (%v)", err)
	}
}
