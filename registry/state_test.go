package registry

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// heldLease acquires a lease at a fresh path and returns the handle.
func heldLease(t *testing.T) *LeaseFile {
	t.Helper()
	lf := &LeaseFile{Path: leasePath(t)}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lf.Release() })
	return lf
}

// The leaseholder writes the state whole and appends to it line by line;
// it is private and a reader sees every line appended.
func TestAStateIsWrittenWholeAndAppendedTo(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	j, err := writeState(lf.Path, held.Instance, []byte("header\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, line := range []string{"one\n", "two\n"} {
		if err := j.Append([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	s := ReadState(lf.Path)
	if s.Found != Regular || string(s.Raw) != "header\none\ntwo\n" || s.Foreign != "" || s.Oversized {
		t.Fatalf("read %+v", s)
	}
	fi, err := os.Lstat(StatePath(lf.Path))
	if err != nil || !testtemp.PrivateMode(fi.Mode().Perm(), 0o600) {
		t.Fatalf("the state's mode: %v %v", fi.Mode(), err)
	}
	if strings.Contains(string(s.Raw), held.Secret) {
		t.Fatal("the state holds the secret")
	}
}

// A state is replaced only while the lease is the writer's; a replaced
// journal's former file is nobody's: what a writer that did not notice
// appends there never reaches the state.
func TestAStateIsReplacedOnlyWhileTheLeaseIsOurs(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	if _, err := writeState(lf.Path, "another instance", []byte("x\n")); !errors.Is(err, ErrLeaseNotOurs) {
		t.Fatalf("written for another instance: %v", err)
	}
	if _, err := os.Lstat(StatePath(lf.Path)); !os.IsNotExist(err) {
		t.Fatalf("something was written: %v", err)
	}
	old, err := writeState(lf.Path, held.Instance, []byte("old\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	next, err := writeState(lf.Path, held.Instance, []byte("new\n")) // a new term of the same lease
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if err := old.Append([]byte("late\n")); err != nil {
		t.Fatal(err)
	}
	if s := ReadState(lf.Path); string(s.Raw) != "new\n" {
		t.Fatalf("the state holds %q", s.Raw)
	}
}

// What is set aside keeps its bytes under a name of its own; a second in
// the same second gets another. Only the leaseholder sets a state aside.
func TestAStateIsSetAsideUnderANameOfItsOwn(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	lease := lf.Path
	writeFile(t, StatePath(lease), []byte("garbage"))
	now := time.Unix(1_800_000_000, 0)
	if moved, err := SetStateAside(lease, "another instance", now); !errors.Is(err, ErrLeaseNotOurs) || moved != "" {
		t.Fatalf("set aside for another instance as %q: %v", moved, err)
	}
	if raw, _ := os.ReadFile(StatePath(lease)); string(raw) != "garbage" {
		t.Fatalf("set aside for another instance: the state holds %q", raw)
	}
	first, err := SetStateAside(lease, held.Instance, now)
	if err != nil || filepath.Base(first) != "server.json.state.unreadable-1800000000" {
		t.Fatalf("set aside as %q: %v", first, err)
	}
	writeFile(t, StatePath(lease), []byte("more garbage"))
	second, err := SetStateAside(lease, held.Instance, now)
	if err != nil || second != first+"-2" {
		t.Fatalf("set aside again as %q: %v", second, err)
	}
	if raw, _ := os.ReadFile(first); string(raw) != "garbage" {
		t.Fatalf("the first holds %q", raw)
	}
	if s := ReadState(lease); s.Found != Missing {
		t.Fatalf("the state path holds %v", s.Found)
	}
}

// A state larger than the bound is read no further than it.
func TestAnOversizedStateIsReadNoFurtherThanTheBound(t *testing.T) {
	lease := leasePath(t)
	writeFile(t, StatePath(lease), bytes.Repeat([]byte("x"), MaxStateSize+4096))
	if s := ReadState(lease); s.Found != Regular || !s.Oversized || len(s.Raw) != MaxStateSize {
		t.Fatalf("read %v, oversized %v, %d bytes", s.Found, s.Oversized, len(s.Raw))
	}
}

// writeState is a journal of the state beside leasePath, written first
// with content.
func writeState(leasePath, instance string, content []byte) (*Journal, error) {
	j := &Journal{Lease: leasePath, Instance: instance}
	if err := j.Replace(content); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// A temporary file that a writer killed before renaming it left beside the
// lease is removed by the next leaseholder's first write of the state; one
// being written now is left to its writer. (Each kill mid-write kept a copy
// of the state there forever.)
func TestTheTemporaryFilesOfAWriterThatDiedAreSwept(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	dir, base := filepath.Dir(lf.Path), filepath.Base(lf.Path)
	left := filepath.Join(dir, "."+base+".state.123.tmp")
	leftLease := filepath.Join(dir, "."+base+".456.tmp")
	fresh := filepath.Join(dir, "."+base+".state.789.tmp")
	for _, p := range []string{left, leftLease, fresh} {
		if err := os.WriteFile(p, []byte("half a state"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * staleTemp)
	for _, p := range []string{left, leftLease} {
		if err := os.Chtimes(p, long, long); err != nil {
			t.Fatal(err)
		}
	}
	j, err := writeState(lf.Path, held.Instance, []byte("header\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, p := range []string{left, leftLease} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, left by a writer that died, is still there: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Lstat(fresh); err != nil {
		t.Errorf("%s, being written, was removed: %v", filepath.Base(fresh), err)
	}
}
