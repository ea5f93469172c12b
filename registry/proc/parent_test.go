package proc

import (
	"context"
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

// A process whose parent is already gone when it starts watching (a
// launcher that spawned it and exited) does not end for that: its parent
// is not watched, and its stdin's end is what ends it — on Unix, where its
// parent pid is already its adopter's, as on Windows, where the parent
// can no longer be opened.
func TestAParentGoneAtStartIsNotWatched(t *testing.T) {
	launcher := startChild(t, "launcher")
	launcher.Expect(t, "launched")
	if _, err := launcher.Cmd.Process.Wait(); err != nil {
		t.Fatal(err)
	}
	launcher.Send(t, "go") // read by the process it launched
	launcher.Expect(t, "watching")
	launcher.Stdin.Close()
	launcher.Expect(t, "stdin ended")
}

// A watch ends with its ctx, its parent alive: the wait is woken by that
// alone, and nothing is left behind (goleak checks once the package's
// tests end).
func TestAWatchEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	gone := WatchParent(ctx)
	cancel()
	select {
	case reason := <-gone:
		t.Fatalf("a live parent was said gone: %s", reason)
	default:
	}
}
