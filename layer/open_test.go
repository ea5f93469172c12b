package layer

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A layer file the index has open never keeps anyone from removing it:
// git replacing files on checkout, or an editor saving, while the index
// reads what changed. (On Windows a file opened without sharing its
// deletion refuses it.)
func TestAFileBeingReadCanBeRemoved(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "review.md")
	if err := os.WriteFile(path, []byte("# Review\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := openRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(path); err != nil {
		t.Fatalf("removing a file being read: %v", err)
	}
	if data, err := io.ReadAll(f); err != nil || string(data) != "# Review\n" {
		t.Fatalf("reading it on: %q, %v", data, err)
	}
}

// A layer file deep in its checkout, its path past Windows' MAX_PATH (260),
// is read as the listing that found it reads it: on Windows a path that
// long is opened only under the \\?\ prefix, which os.Open adds.
func TestAFileDeepInItsCheckoutIsRead(t *testing.T) {
	dir := testtemp.Dir(t)
	for len(dir) < 300 {
		dir = filepath.Join(dir, "a-directory-deep-in-the-checkout")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "review.md")
	if err := os.WriteFile(path, []byte("# Review\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := openRegular(path)
	if err != nil {
		t.Fatalf("opening a file %d characters deep: %v", len(path), err)
	}
	defer f.Close()
	if data, err := io.ReadAll(f); err != nil || string(data) != "# Review\n" {
		t.Fatalf("reading it: %q, %v", data, err)
	}
}
