package proc

import (
	"strings"
	"testing"
)

// A process whose parent dies is told so, though its stdin stays open (a
// host killed hard leaves its children so): on Unix its parent pid
// changes, on Windows the wait on its parent's handle ends.
func TestWatchParentSeesTheParentDie(t *testing.T) {
	middle := startChild(t, "middle")
	middle.Expect(t, "watching") // said by the orphan-to-be
	if err := middle.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if got := middle.Line(t); !strings.HasPrefix(got, "orphaned: the parent process ") || !strings.HasSuffix(got, " is gone") {
		t.Fatalf("the orphan said %q", got)
	}
}
