//go:build linux || darwin

package layer

import (
	"context"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"testing"
	"time"
)

// Where the system gives a change time a program cannot set back and a
// file identity (Linux, macOS), an untouched tree is proved unchanged and
// the watcher's start does not rebuild.

func TestAnUntouchedTreeIsProvedUnchanged(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, stampedTree)
	_, src, err := build(root, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !unchangedSince(root, src, 0) {
		t.Fatal("an untouched tree was not proved unchanged")
	}
	// Files changed less than the slack before the build are never trusted:
	// a change within the same tick of the file system's clock would leave
	// their times as they were.
	if unchangedSince(root, src, time.Hour) {
		t.Fatal("files changed within the slack were trusted")
	}
}

func TestWatchSkipsTheStartRebuildOnlyWhenProvedUnchanged(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, stampedTree)
	log, entries := tapLogger(t)
	l, err := Open(Config{Root: root, Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	l.slack = 0 // the files were written just now; no clock tick is waited for here
	changes := watch(t, l)
	e, _ := waitLog(t, entries, "layer unchanged")
	if rebuilt, ok := e.ContextMap()["rebuilt"]; !ok || rebuilt != false {
		t.Fatalf("the start rebuilt the index (fields %v), want it proved unchanged", e.ContextMap())
	}
	// Changes after the start are still seen.
	write(t, root, ".ai/repo/rules/a.md", "---\nid: a\nkind: rule\n---\nA, edited\n")
	if c := waitChange(t, changes); c.new.Generation != 2 {
		t.Fatalf("generation %d after a change, want 2", c.new.Generation)
	}
}

// A layer watched again after a rebuild caught up with what changed while
// it was not watched (a process that bridged, then serves again) trusts
// that rebuild as it trusts Open's: its start does not build once more.
func TestWatchAgainAfterACatchUpRebuildDoesNotBuildTwice(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, stampedTree)
	log, entries := tapLogger(t)
	l, err := Open(Config{Root: root, Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	l.slack = 0
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Watch(ctx, nil) }()
	waitLog(t, entries, "layer unchanged")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	write(t, root, ".ai/repo/rules/a.md", "---\nid: a\nkind: rule\n---\nA, edited while unwatched\n")
	if _, ix, ok := l.Rebuild(); !ok || ix.Generation != 2 {
		t.Fatalf("the catch-up rebuild published %v, want generation 2", ok)
	}
	waitLog(t, entries, "layer rebuilt")
	changes := watch(t, l)
	e, seen := waitLog(t, entries, "layer unchanged")
	if rebuilt, ok := e.ContextMap()["rebuilt"]; !ok || rebuilt != false || count(seen, "layer rebuilt") > 0 {
		t.Fatalf("watched again, the start built the index once more (fields %v, before it %q)", e.ContextMap(), seen)
	}
	write(t, root, ".ai/repo/rules/a.md", "---\nid: a\nkind: rule\n---\nA, edited once watched\n")
	if c := waitChange(t, changes); c.new.Generation != 3 {
		t.Fatalf("generation %d after a change, want 3", c.new.Generation)
	}
}
