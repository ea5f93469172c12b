package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// The lease directory the product makes ignores itself in git: a
// .gitignore of "*", private, with nothing left beside it.
func TestTheLeaseDirectoryIsIgnoredByGit(t *testing.T) {
	path := leasePath(t)
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	ignore := filepath.Join(filepath.Dir(path), ".gitignore")
	if raw, err := os.ReadFile(ignore); err != nil || string(raw) != ignoreText {
		t.Fatalf("the .gitignore: %q %v", raw, err)
	}
	if fi, err := os.Lstat(ignore); err != nil || !testtemp.PrivateMode(fi.Mode(), 0o600) {
		t.Fatalf("the .gitignore's mode: %v %v", fi.Mode(), err)
	}
	noTemporaries(t, filepath.Dir(path))
}

// A lease directory made before (by an older version, or by hand) gets
// its .gitignore the next time a lease is acquired in it; one that is
// there already is the user's, and is left as it is.
func TestALeaseDirectoryWithoutItsGitignoreGetsOne(t *testing.T) {
	path := leasePath(t)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lf := &LeaseFile{Path: path}
	if err := lf.Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	ignore := filepath.Join(dir, ".gitignore")
	if raw, _ := os.ReadFile(ignore); string(raw) != ignoreText {
		t.Fatalf("an existing lease directory got no .gitignore: %q", raw)
	}
	if err := lf.Release(); err != nil {
		t.Fatal(err)
	}
	mine := "# mine\n*.json\n"
	if err := os.WriteFile(ignore, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(ignore); string(raw) != mine {
		t.Fatalf("the user's .gitignore was rewritten: %q", raw)
	}
	noTemporaries(t, dir)
}
