//go:build unix

package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// The page that holds a board link is its user's alone, whatever the umask.
func TestTheBoardsPageIsReadableByItsUserOnly(t *testing.T) {
	home := testtemp.Dir(t)
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("HOME", home)
	if _, _, err := writeBoardOpener("http://127.0.0.1:1/board?token=c3"); err != nil {
		t.Fatal(err)
	}
	cache, _ := os.UserCacheDir()
	fi, err := os.Stat(filepath.Join(cache, "majordomus-mcp", "board-1.html"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the board's page has mode %v; want 0600", fi.Mode().Perm())
	}
}
