//go:build linux || darwin

package registry

import (
	"errors"
	"io"
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
	j, there, held := movedJournal(t, nil)
	defer j.Close()
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
	if _, err := os.Lstat(StatePath(j.Lease)); !os.IsNotExist(err) {
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

// A moved journal whose file could not be opened again once replaced (out
// of descriptors, say) still knows where it is.
func TestAMovedStateIsFoundAfterItsReopeningFailed(t *testing.T) {
	fsys := &reopenFails{}
	j, there, _ := movedJournal(t, fsys)
	defer j.Close()
	fsys.once = true
	if err := j.Replace([]byte("afresh\n")); err == nil {
		t.Fatal("the reopening did not fail")
	}
	if err := j.Replace([]byte("again\n")); err != nil {
		t.Fatalf("the moved state was lost: %v", err)
	}
	if s := ReadState(there); string(s.Raw) != "again\n" {
		t.Fatalf("the moved state holds %q", s.Raw)
	}
}

// movedJournal is a journal written beside a lease it holds, whose
// checkout was then moved; there is the lease where it is now.
func movedJournal(t *testing.T, fsys FS) (j *Journal, there string, held Lease) {
	t.Helper()
	root := checkoutRoot(t)
	lf := &LeaseFile{Path: Path(root, "")}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	held, _ = lf.Held()
	j = &Journal{Lease: lf.Path, Instance: held.Instance, FS: fsys}
	if err := j.Replace([]byte("header\n")); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(testtemp.Dir(t), "moved")
	if err := os.Rename(root, moved); err != nil {
		t.Fatal(err)
	}
	return j, Path(moved, ""), held
}

// reopenFails is the real file system, whose next opening to append fails
// once armed.
type reopenFails struct {
	osFS
	once bool
}

func (f *reopenFails) OpenAppend(path string) (io.WriteCloser, error) {
	if f.once {
		f.once = false
		return nil, errors.New("too many open files")
	}
	return f.osFS.OpenAppend(path)
}

// A journal whose .ai/local was moved out of the checkout and linked back
// in its place (as one relocates a directory) is never replaced through
// that link: the state is written as the lease is, through no link from
// .ai/local down (docs/security.md), and every other client refuses the
// lease there as linked. It wrote its temporary file and renamed it over
// the state where the link leads.
func TestAStateIsNeverReplacedThroughALinkedLocal(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	j, err := writeState(lf.Path, held.Instance, []byte("header\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	local := filepath.Dir(filepath.Dir(filepath.Dir(lf.Path)))
	elsewhere := filepath.Join(testtemp.Dir(t), "local")
	if err := os.Rename(local, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, local); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lf.Path); err == nil {
		t.Fatal("a lease reached through a linked .ai/local is trusted")
	}
	if err := j.Replace([]byte("afresh\n")); err == nil {
		t.Fatal("the state was replaced through the linked .ai/local")
	}
	there := StatePath(filepath.Join(elsewhere, "state", "mcp", filepath.Base(lf.Path)))
	if raw, err := os.ReadFile(there); err != nil || string(raw) != "header\n" {
		t.Fatalf("the state where the link leads holds %q (%v)", raw, err)
	}
}
