package registry

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

func TestSelf(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatalf("Self: %v", err)
	}
	if self.PID != os.Getpid() || self.Start == 0 || self.BootID == "" || self.Host == "" {
		t.Errorf("Self = %+v", self)
	}
	if !filepath.IsAbs(self.Executable.Path) || self.Executable.Size == 0 || self.Executable.MTime == 0 {
		t.Errorf("Self executable = %+v", self.Executable)
	}
}

// A directory keeps its id when it moves; another made at its path has
// another; what is no directory has none.
func TestDirectoryID(t *testing.T) {
	base := testtemp.Dir(t)
	first := filepath.Join(base, "checkout")
	if err := os.Mkdir(first, 0o755); err != nil {
		t.Fatal(err)
	}
	id := DirectoryID(first)
	if id == "" {
		t.Fatal("a directory has no id")
	}
	moved := filepath.Join(base, "moved")
	if err := os.Rename(first, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(first, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := DirectoryID(moved); got != id {
		t.Errorf("moved, its id is %q, was %q", got, id)
	}
	if got := DirectoryID(first); got == "" || got == id {
		t.Errorf("the directory made at the old path has the id %q (the moved one's is %q)", got, id)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(base, "missing")} {
		if got := DirectoryID(p); got != "" {
			t.Errorf("DirectoryID(%s) = %q, want none", p, got)
		}
	}
}
