package testtemp

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirIsRemovedWithWhatItHolds(t *testing.T) {
	var dir string
	t.Run("user", func(t *testing.T) {
		dir = Dir(t)
		deep := filepath.Join(dir, "a", "b")
		if err := os.MkdirAll(deep, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(deep, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, "a"), 0o500); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists after the test: %v", dir, err)
	}
}
