package registry

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"

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

// A checkout's directory is identified through a handle that shares its
// deletion: a rename of the checkout meanwhile goes through. (It was read
// through os.Open, which does not share it: the rename failed with a
// sharing violation while the id was read, at every process's start and
// every fleet inventory.)
func TestADirectoryBeingIdentifiedCanBeRenamed(t *testing.T) {
	dir := filepath.Join(testtemp.Dir(t), "checkout")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	want := DirectoryID(dir)
	h, err := openDirectory(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if err := os.Rename(dir, dir+"-moved"); err != nil {
		t.Fatalf("renaming a directory being identified: %v", err)
	}
	if got := DirectoryID(dir + "-moved"); want == "" || got != want {
		t.Fatalf("the moved directory's id is %q; want %q", got, want)
	}
}
