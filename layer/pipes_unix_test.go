//go:build unix

package layer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// withoutWaiting runs read, failing if it is still waiting on the named
// pipe at path after 10 s (and then letting it go, by opening the pipe's
// other end).
func withoutWaiting[T any](t *testing.T, path string, read func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- read() }()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatalf("still waiting on the named pipe %s after 10 s", path)
	}
	panic("unreachable")
}

func namedPipe(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A named pipe where the manifest should be is refused at once: every
// start reads the manifest, and every inventory again.
func TestAManifestThatIsANamedPipeIsRefusedAtOnce(t *testing.T) {
	root := testtemp.Dir(t)
	path := filepath.Join(root, ".ai", "manifest.yaml")
	namedPipe(t, path)
	err := withoutWaiting(t, path, func() error { _, err := LoadManifest(root); return err })
	if !errors.Is(err, ErrInvalidManifest) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("error = %v, want ErrInvalidManifest: not a regular file", err)
	}
}

// A named pipe named as an object is listed as skipped, with a warning
// that says why it is not in the index.
func TestANamedPipeNamedAsAnObjectIsSkippedWithAWarning(t *testing.T) {
	root := testtemp.Dir(t)
	namedPipe(t, filepath.Join(root, ".ai", "repo", "knowledge", "x.md"))
	files, diags := listFiles(root)
	want := []Diagnostic{{Level: LevelWarning, Path: ".ai/repo/knowledge/x.md", Message: "not a regular file: skipped"}}
	if len(files) != 0 || !slices.Equal(diags, want) {
		t.Fatalf("listed %v with %+v, want nothing and %+v", files, diags, want)
	}
}

// An object replaced by a named pipe after it was listed is skipped, as
// listing it would: the index is built without waiting for a writer.
func TestAnObjectReplacedByANamedPipeIsSkipped(t *testing.T) {
	root := testtemp.Dir(t)
	path := filepath.Join(root, ".ai", "repo", "knowledge", "x.md")
	namedPipe(t, path)
	got := withoutWaiting(t, path, func() parsed { return readObject(root, ".ai/repo/knowledge/x.md") })
	if got.ok || len(got.diags) != 1 || got.diags[0].Level != LevelWarning || got.diags[0].Message != "not a regular file: skipped" {
		t.Fatalf("read: %+v, want skipped with a warning", got)
	}
}
