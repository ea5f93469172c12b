package fswatch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

func open(t *testing.T) *Watch {
	t.Helper()
	w, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func add(t *testing.T, w *Watch, dir string) {
	t.Helper()
	if err := w.Add(dir); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// until takes w's events until one names name, and returns every name
// taken on the way.
func until(t *testing.T, w *Watch, name string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for !seen[name] {
		<-w.Ready()
		events, _ := w.Take()
		for _, ev := range events {
			seen[ev.Name] = true
		}
	}
	return seen
}

// Events wait to be taken one a name, however many come meanwhile: a slow
// taker never makes them pile up.
func TestAnInboxKeepsOneEntryAName(t *testing.T) {
	dir := testtemp.Dir(t)
	w := open(t)
	add(t, w, dir)
	for i := range 2000 {
		write(t, filepath.Join(dir, "a.md"), fmt.Sprint(i))
	}
	write(t, filepath.Join(dir, "last.md"), "") // once it is in, every write before it is
	last := filepath.Join(dir, "last.md")
	for {
		<-w.Ready()
		w.mu.Lock()
		n, done := len(w.ops), w.ops[last] != 0
		w.mu.Unlock()
		if done {
			if n != 2 {
				t.Fatalf("%d entries wait for 2 names", n)
			}
			return
		}
	}
}

// Two watches share one watcher: each hears only of what it watches, and
// one's removal or end leaves the other's watch of the same directory.
func TestWatchesShareOneWatcher(t *testing.T) {
	a, b := open(t), open(t)
	if a.h != b.h {
		t.Fatal("two watches of one process use two watchers")
	}
	mine, theirs, both := testtemp.Dir(t), testtemp.Dir(t), testtemp.Dir(t)
	add(t, a, mine)
	add(t, b, theirs)
	add(t, a, both)
	add(t, b, both)

	write(t, filepath.Join(theirs, "x"), "")
	write(t, filepath.Join(mine, "y"), "") // after: once a hears of it, b's write was reported
	if seen := until(t, a, filepath.Join(mine, "y")); seen[filepath.Join(theirs, "x")] {
		t.Fatal("a watch heard of a directory only another watches")
	}

	if err := a.Remove(both); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(both, "z"), "")
	until(t, b, filepath.Join(both, "z"))

	add(t, a, both)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(both, "w"), "")
	until(t, a, filepath.Join(both, "w"))
	if got := a.WatchList(); len(got) != 2 {
		t.Fatalf("a watches %q, want its two directories", got)
	}
}

// The watcher ends with its last watch (an idle process holds no inotify
// instance), and the next watch opens another.
func TestTheWatcherEndsWithItsLastWatch(t *testing.T) {
	a := open(t)
	h := a.h
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.fw.Add(testtemp.Dir(t)); err == nil {
		t.Fatal("the watcher still watches after its last watch closed")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("a second close: %v", err)
	}
	b := open(t)
	if b.h == h {
		t.Fatal("a closed watcher was shared again")
	}
	dir := testtemp.Dir(t)
	add(t, b, dir)
	write(t, filepath.Join(dir, "v"), "")
	until(t, b, filepath.Join(dir, "v"))
}

// Every watch hears of the watcher's errors: an overflow may have lost
// any watch's events.
func TestEveryWatchHearsOfAnError(t *testing.T) {
	a, b := open(t), open(t)
	a.h.fw.Errors <- fsnotify.ErrEventOverflow // as the watcher's reader reports one
	for _, w := range []*Watch{a, b} {
		<-w.Ready()
		if _, errs := w.Take(); len(errs) != 1 {
			t.Fatalf("errors %v, want the overflow", errs)
		}
	}
}

// A name added again by another watch is the directory that stands there
// now, for both, not one moved away meanwhile (as kqueue would keep it).
func TestANameAddedAgainIsWhatStandsThereNow(t *testing.T) {
	parent := testtemp.Dir(t) // first: removed once the watches ended (Windows holds what they watch)
	a, b := open(t), open(t)
	dir := filepath.Join(parent, "d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, a, dir)
	if err := os.Rename(dir, filepath.Join(parent, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	add(t, b, dir)
	write(t, filepath.Join(dir, "x"), "")
	until(t, a, filepath.Join(dir, "x"))
	until(t, b, filepath.Join(dir, "x"))
}

// A name added while it is watched, by another watch or by its own, costs
// nothing: no event the kernel holds for it is dropped (on Windows putting
// the watch again would drop them).
func TestANameAddedByAnotherWatchLosesNoEvent(t *testing.T) {
	dir := testtemp.Dir(t)
	a, b := open(t), open(t)
	add(t, a, dir)
	const n = 300
	for i := range n {
		write(t, filepath.Join(dir, fmt.Sprint("f", i)), "")
		add(t, b, dir)
		if err := b.Remove(dir); err != nil {
			t.Fatal(err)
		}
		add(t, a, dir)
	}
	write(t, filepath.Join(dir, "last"), "") // once it is heard, every write before it was
	seen := until(t, a, filepath.Join(dir, "last"))
	for i := range n {
		if !seen[filepath.Join(dir, fmt.Sprint("f", i))] {
			t.Fatalf("a missed the file f%d, made as b added its directory (%d names heard)", i, len(seen))
		}
	}
}
