//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A checkout's .ai may link to a directory: with no .ai/local yet, its
// lease is absent, not blocked, and is made through the link; a link to a
// file, a dangling one or a loop still blocks the way.
func TestLeaseFile_ALinkedAIDirectoryLeadsOn(t *testing.T) {
	root := testtemp.Dir(t)
	elsewhere := filepath.Join(testtemp.Dir(t), "ai")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, ".ai")); err != nil {
		t.Fatal(err)
	}
	path := Path(root, "")
	if obs := observe(t, path); obs.Verdict.Class != Absent {
		t.Fatalf("with .ai a link to a directory, the lease is judged %+v, want absent", obs.Verdict)
	}
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); err != nil {
		t.Fatalf("Acquire through the link: %v", err)
	}

	file := filepath.Join(elsewhere, "file")
	writeFile(t, file, []byte("not a directory"))
	other := testtemp.Dir(t)
	if err := os.Symlink(file, filepath.Join(other, ".ai")); err != nil {
		t.Fatal(err)
	}
	if obs := observe(t, Path(other, "")); obs.Verdict.Class != Unusable || !strings.Contains(obs.Verdict.Reason, "not a directory") {
		t.Fatalf("with .ai a link to a file, the lease is judged %+v, want unusable", obs.Verdict)
	}
	for _, c := range []struct{ target, says string }{
		{"nowhere", "leads nowhere"}, // dangling
		{".ai", "symbolic links"},    // a loop
	} {
		root := testtemp.Dir(t)
		if err := os.Symlink(filepath.Join(root, c.target), filepath.Join(root, ".ai")); err != nil {
			t.Fatal(err)
		}
		if obs := observe(t, Path(root, "")); obs.Verdict.Class != Unusable || !strings.Contains(obs.Verdict.Reason, c.says) {
			t.Fatalf("with .ai a link to %s, the lease is judged %+v, want unusable", c.target, obs.Verdict)
		}
	}
}

func TestLeaseFile_TakeOver_RemovesANamedPipeWithoutOpeningIt(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	obs := observe(t, path)
	if obs.Verdict.Class != Corrupt {
		t.Fatalf("a named pipe was judged %+v", obs.Verdict)
	}
	if removed, err := (&LeaseFile{Path: path}).TakeOver(obs); err != nil || !removed {
		t.Fatalf("TakeOver = %t, %v", removed, err)
	}
}

// A link at the .gitignore's name is never followed: its target is not
// written, and the link stays.
func TestALinkAtTheGitignoreIsNeverFollowed(t *testing.T) {
	path := leasePath(t)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, filepath.Join(dir, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := (&LeaseFile{Path: path}).Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Fatalf("the link's target was written: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".gitignore")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi.Mode(), err)
	}
	noTemporaries(t, dir)
}

// What is not a regular file at the state path is said, never opened or
// followed: a named pipe does not block the read, a link's target is
// never read.
func TestReadStateNeitherFollowsNorBlocks(t *testing.T) {
	lf := heldLease(t)
	held, _ := lf.Held()
	lease := lf.Path
	writeFile(t, lease+".target", []byte("a secret elsewhere"))
	state := StatePath(lease)
	for _, c := range []struct {
		plant func() error
		want  Found
	}{
		{func() error { return syscall.Mkfifo(state, 0o600) }, Special},
		{func() error { return os.Symlink(lease+".target", state) }, Symlink},
		{func() error { return os.Mkdir(state, 0o700) }, Directory},
	} {
		if err := c.plant(); err != nil {
			t.Fatal(err)
		}
		if s := ReadState(lease); s.Found != c.want || len(s.Raw) != 0 {
			t.Fatalf("read %v (%q), want %v", s.Found, s.Raw, c.want)
		}
		if _, err := SetStateAside(lease, held.Instance, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if raw, _ := os.ReadFile(lease + ".target"); string(raw) != "a secret elsewhere" {
		t.Fatal("the link's target changed")
	}
}
