package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A demo whose first client cannot start says why and stops there: no
// later section runs on a client it does not have, and its directory is
// removed.
func TestADemoWhoseClientCannotStartStops(t *testing.T) {
	tmp := testtemp.Dir(t)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp) // Windows' name for it
	var out bytes.Buffer
	err := Run(context.Background(), &out, filepath.Join(tmp, "no-such-executable"))
	if err == nil {
		t.Fatalf("the demo ran without its executable:\n%s", out.String())
	}
	if bytes.Contains(out.Bytes(), []byte("## 2.")) {
		t.Errorf("the demo went on after its failure:\n%s", out.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v", left)
	}
}

// A demo that cannot write (a full disk, a closed pipe) stops at once with
// why, and leaves nothing. (It went on, and exited 0, showing nothing.)
func TestADemoThatCannotWriteStops(t *testing.T) {
	tmp := testtemp.Dir(t)
	t.Setenv("TMPDIR", tmp)
	t.Setenv("TMP", tmp)
	err := Run(context.Background(), fullWriter{}, filepath.Join(tmp, "never-started"))
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("a demo on a full disk ended with %v", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the demo left %v", left)
	}
}

// fullWriter is a disk with no room left.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }
