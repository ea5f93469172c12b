package registry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A lease another process has open without sharing its deletion (os.Open
// shares reading and writing only) is removed once that process closes
// it: the refusal meanwhile is retried. (It was returned at once, and a
// take-over or a release failed.)
func TestUnlinkWaitsOutAReaderThatDoesNotShareDeletion(t *testing.T) {
	path := filepath.Join(testtemp.Dir(t), "lease")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	pauses := 0
	err = unlinkPausing(path, func(time.Duration) {
		pauses++
		reader.Close() // the reader is done, as the first try is refused
	})
	if err != nil {
		t.Fatalf("unlink after %d pauses: %v", pauses, err)
	}
	if pauses == 0 {
		t.Fatal("the first try was not refused: the test proves nothing")
	}
	if _, err := os.Lstat(path); !os.IsNotExist(err) {
		t.Fatalf("the lease is still there: %v", err)
	}
}
