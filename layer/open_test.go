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
