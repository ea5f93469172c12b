package layer

import (
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/fswatch"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A directory no watch can be put on (this user's inotify watches used up
// by an editor on a large tree, say) is kept current all the same: what
// changes there is found by a rescan, Withheld names the first refused,
// and the log says so once; once every watch can be put, the changes are
// heard again, and that is said too.
func TestADirectoryThatCannotBeWatchedIsRescanned(t *testing.T) {
	refuse := refusing(t, errors.New("no watch for this one"), func(path string) bool { return filepath.Base(path) == "unwatched" })
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml":          testManifest,
		".ai/repo/rules/a.md":        "---\nid: a\nkind: rule\n---\nA\n",
		".ai/repo/unwatched/note.md": "---\nid: n\nkind: note\n---\nN\n",
	})
	l, changes, entries, before := watchAt(t, root, false)
	if count(before, "part of the layer cannot be watched: its changes are found by a rescan") != 1 {
		t.Errorf("the unwatched directory is not said once as the watch starts: %q", before)
	}
	if why := l.Withheld(); !strings.Contains(why, "found by a rescan") || !strings.Contains(why, "unwatched: no watch for this one") {
		t.Errorf("Withheld says %q", why)
	}

	write(t, root, ".ai/repo/unwatched/late.md", "---\nid: late\nkind: note\n---\nL\n")
	waitBody(t, changes, "majordomus://note/late", "L\n")
	refuse.Store(false)
	waitLog(t, entries, "the layer is watched whole again: its changes are heard at once")
	if why := l.Withheld(); why != "" {
		t.Errorf("Withheld still says %q", why)
	}
	write(t, root, ".ai/repo/unwatched/late.md", "---\nid: late\nkind: note\n---\nL, edited\n")
	waitBody(t, changes, "majordomus://note/late", "L, edited\n")
}

// A layer that cannot be watched at all is kept current by a rescan, and
// Withheld says so, until a watch can be had again.
func TestALayerThatCannotBeWatchedIsRescanned(t *testing.T) {
	refuse := refusing(t, errors.New("no watches left"), func(string) bool { return true })
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/rules/a.md": "---\nid: a\nkind: rule\n---\nA\n"})
	log, entries := tapLogger(t)
	l, err := Open(Config{Root: root, Debounce: 20 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	changes := watch(t, l)
	waitLog(t, entries, "the layer cannot be watched: its changes are found by a rescan")
	if why := l.Withheld(); !strings.Contains(why, "it cannot be watched") || !strings.Contains(why, "no watches left") {
		t.Errorf("Withheld says %q", why)
	}
	write(t, root, ".ai/repo/rules/b.md", "---\nid: b\nkind: rule\n---\nB\n")
	waitBody(t, changes, "majordomus://rule/b", "B\n")
	refuse.Store(false)
	waitLog(t, entries, "the layer is watched whole again: its changes are heard at once")
	if why := l.Withheld(); why != "" {
		t.Errorf("Withheld still says %q", why)
	}
	write(t, root, ".ai/repo/rules/b.md", "---\nid: b\nkind: rule\n---\nB, edited\n")
	waitBody(t, changes, "majordomus://rule/b", "B, edited\n")
}

// refusing has every watch of a path which refused reports true refused
// with err, as the kernel refuses one once the watches are used up, until
// the returned flag is cleared or the test ends.
func refusing(t *testing.T, err error, refused func(path string) bool) *atomic.Bool {
	refuse := new(atomic.Bool)
	refuse.Store(true)
	add := addWatch
	addWatch = func(w *fswatch.Watch, path string) error {
		if refuse.Load() && refused(path) {
			return err
		}
		return add(w, path)
	}
	t.Cleanup(func() { addWatch = add })
	return refuse
}
