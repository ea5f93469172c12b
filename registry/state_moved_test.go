//go:build linux || darwin

package registry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A journal whose checkout was moved, lease and state with it, is replaced
// where its records go now, by the lease there, which still names its
// writer: not at the path it was opened at, where nothing is (it grew
// without bound before). Once the lease there names another, it is not.
func TestAMovedStateIsReplacedWhereItIsNow(t *testing.T) {
	root := checkoutRoot(t)
	lf := &LeaseFile{Path: Path(root, "")}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	held, _ := lf.Held()
	j, err := writeState(lf.Path, held.Instance, []byte("header\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	moved := filepath.Join(testtemp.Dir(t), "moved")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	there := Path(moved, "")
	if err := j.Append([]byte("appended\n")); err != nil {
		t.Fatal(err)
	}
	if err := j.Replace([]byte("afresh\n")); err != nil {
		t.Fatalf("the moved state was not replaced: %v", err)
	}
	if err := j.Append([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if s := ReadState(there); string(s.Raw) != "afresh\nafter\n" {
		t.Fatalf("the moved state holds %q", s.Raw)
	}
	if _, err := os.Lstat(StatePath(lf.Path)); !os.IsNotExist(err) {
		t.Fatalf("something was written at the old path: %v", err)
	}

	other := newLease(t)
	other.Instance = strings.Repeat("1", len(held.Instance))
	if err := os.Remove(there); err != nil {
		t.Fatal(err)
	}
	if err := (&LeaseFile{Path: there}).Acquire(other); err != nil {
		t.Fatal(err)
	}
	if err := j.Replace([]byte("late\n")); !errors.Is(err, ErrLeaseNotOurs) {
		t.Fatalf("replaced under another's lease: %v", err)
	}
	if s := ReadState(there); string(s.Raw) != "afresh\nafter\n" {
		t.Fatalf("the state holds %q", s.Raw)
	}
}
