package layer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A layer continued from another server's generation serves the same
// files under that generation and others under the next, never going
// back; its rebuilds go on from there.
func TestAContinuedLayerGoesOnFromTheOthersGeneration(t *testing.T) {
	root, l, changes, _, _ := openWatched(t, map[string]string{
		".ai/manifest.yaml":   testManifest,
		".ai/repo/rules/a.md": "---\nid: a\nkind: rule\nversion: 1\n---\nA\n",
	}, false)
	first := l.Current()
	if l.Continue(0, "") || l.Continue(0, first.Digest()) || l.Current() != first {
		t.Fatalf("nothing served before moved generation %d to %d", first.Generation, l.Current().Generation)
	}
	if !l.Continue(5, first.Digest()) || l.Current().Generation != 5 {
		t.Fatalf("the same files served under 5 are generation %d here", l.Current().Generation)
	}
	if l.Continue(3, "other files") || l.Continue(5, first.Digest()) || !l.Continue(5, "other files") || l.Current().Generation != 6 {
		t.Fatalf("other files served under 5 leave generation %d here, want 6", l.Current().Generation)
	}
	if d := l.Current().Digest(); d != first.Digest() || len(Changed(first, l.Current())) != 0 {
		t.Fatalf("the continued index's objects changed: %v", Changed(first, l.Current()))
	}
	write(t, root, ".ai/repo/rules/a.md", "---\nid: a\nkind: rule\nversion: 1\n---\nA, edited\n")
	if c := waitChange(t, changes); c.new.Generation != 7 || c.new.Digest() == first.Digest() {
		t.Fatalf("the rebuild after continuing is generation %d, want 7, with another digest", c.new.Generation)
	}
}

func TestWatchModify(t *testing.T) {
	files := map[string]string{
		".ai/manifest.yaml":   testManifest,
		".ai/repo/rules/a.md": "---\nid: a\nkind: rule\nversion: 1\n---\nA\n",
		".ai/repo/rules/b.md": "---\nid: b\nkind: rule\n---\nB\n",
		".ai/repo/broken.md":  "---\nid: [\n---\n", // degraded, served anyway
	}
	root, l, changes, entries, opening := openWatched(t, files, false)
	first := l.Current()
	if first.Generation != 1 || first.State() != "degraded" {
		t.Fatalf("opened generation %d state %s", first.Generation, first.State())
	}
	if n := count(opening, "layer diagnostic"); n != 1 {
		t.Errorf("%d diagnostics logged at open, want 1: %q", n, opening)
	}
	if err := l.Watch(context.Background(), nil); !errors.Is(err, ErrWatching) {
		t.Errorf("second Watch = %v, want ErrWatching", err)
	}

	write(t, root, ".ai/repo/rules/a.md", "---\nid: a\nkind: rule\nversion: 1\n---\nA, edited\n")
	c := waitChange(t, changes)
	if c.old != first || c.new.Generation != 2 || l.Current() != c.new {
		t.Fatalf("change old gen %d new gen %d, current gen %d", c.old.Generation, c.new.Generation, l.Current().Generation)
	}
	if got := Changed(c.old, c.new); !reflect.DeepEqual(got, []string{"majordomus://rule/a@1"}) {
		t.Errorf("Changed = %v", got)
	}
	if o, _ := c.new.Lookup("majordomus://rule/a@1"); o.Body != "A, edited\n" {
		t.Errorf("new body %q", o.Body)
	}
	// The broken file's diagnostic was logged once, at Open, not again.
	e, before := waitLog(t, entries, "layer rebuilt")
	if n := count(before, "layer diagnostic"); n != 0 {
		t.Errorf("diagnostic logged again on rebuild: %q", before)
	}
	if f := e.ContextMap(); f["generation"] != uint64(2) || f["objects"] != int64(2) || f["index_state"] != "degraded" {
		t.Errorf("layer rebuilt logged %v", f)
	}
}

func TestWatchNewDirectories(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		rel   string
	}{
		{"new subdirectory", map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\n"}, ".ai/repo/skills/deep/er/s.md"},
		{"repo created later", map[string]string{".ai/manifest.yaml": testManifest}, ".ai/repo/skills/s.md"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, _, changes, _, _ := openWatched(t, tt.files, false)
			write(t, root, tt.rel, "---\nid: s\nkind: skill\n---\nnew\n")
			c := waitChange(t, changes)
			if c.new.Generation != 2 || !reflect.DeepEqual(Changed(c.old, c.new), []string{"majordomus://skill/s"}) {
				t.Fatalf("generation %d changed %v", c.new.Generation, Changed(c.old, c.new))
			}
			// A file added later in the same new directory is seen too.
			write(t, root, filepath.Join(filepath.Dir(tt.rel), "t.md"), "---\nid: t\nkind: skill\n---\n")
			if c := waitChange(t, changes); c.new.Generation != 3 || !reflect.DeepEqual(Changed(c.old, c.new), []string{"majordomus://skill/t"}) {
				t.Fatalf("generation %d changed %v", c.new.Generation, Changed(c.old, c.new))
			}
		})
	}
}

func TestWatchNoopTouch(t *testing.T) {
	content := "---\nid: a\nkind: rule\n---\nA\n"
	files := map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": content}
	root, l, changes, entries, _ := openWatched(t, files, false)
	write(t, root, ".ai/repo/a.md", content)
	now := time.Now()
	if err := os.Chtimes(filepath.Join(root, ".ai/repo/a.md"), now, now); err != nil {
		t.Fatal(err)
	}
	waitLog(t, entries, "layer unchanged")
	if g := l.Current().Generation; g != 1 {
		t.Fatalf("generation %d after a no-op write, want 1", g)
	}
	// Writes under .ai but outside .ai/repo are not the layer's business.
	write(t, root, ".ai/local/state/mcp/server.json", "{}")
	write(t, root, ".ai/repo/a.md", content+"more\n")
	if c := waitChange(t, changes); c.new.Generation != 2 {
		t.Fatalf("generation %d, want 2 (the no-op did not bump)", c.new.Generation)
	}
}

func TestStrict(t *testing.T) {
	t.Run("open refuses a degraded index", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{
			".ai/manifest.yaml": testManifest,
			".ai/repo/bad.md":   "---\nkind: rule\n---\n",
		})
		_, err := Open(Config{Root: root, Strict: true})
		if !errors.Is(err, ErrDegraded) {
			t.Fatalf("Open = %v, want ErrDegraded", err)
		}
		for _, s := range []string{"refusing to serve under --strict", "1 error(s)", ".ai/repo/bad.md"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q lacks %q", err, s)
			}
		}
		if l, err := Open(Config{Root: root}); err != nil || l.Current().State() != "degraded" {
			t.Fatalf("non-strict Open = %v", err)
		}
		// The refusal stands while its files are as they were, where the
		// system stamps them (stamps_other_test.go).
		var r *refusal
		if !errors.As(err, &r) {
			t.Fatalf("Open's refusal %T carries no files", err)
		}
		r.slack = 0 // the files were written just now; no clock tick is waited for here
		fi, _ := os.Stat(filepath.Join(root, ".ai/repo/bad.md"))
		if _, stamped := stampOf(fi); Unchanged(err) != stamped || Unchanged(errors.New("layer: opening: no root")) {
			t.Fatalf("an unchanged refusal is said to stand: %t, with stamps: %t; or another error is", Unchanged(err), stamped)
		}
		write(t, root, ".ai/repo/bad.md", "---\nid: bad\nkind: rule\n---\n")
		if Unchanged(err) {
			t.Fatal("the refusal stands after its file changed")
		}
	})
	t.Run("a degraded rebuild keeps the old index", func(t *testing.T) {
		files := map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\n"}
		root, l, changes, entries, _ := openWatched(t, files, true)
		first := l.Current()
		write(t, root, ".ai/repo/a.md", "---\nid: a\nkind: rule\ntitle: : broken\n---\n")
		e, _ := waitLog(t, entries, "degraded layer not served under strict")
		if e.Level != zapcore.ErrorLevel || l.Current() != first {
			t.Fatalf("level %v, current generation %d", e.Level, l.Current().Generation)
		}
		if why := l.Withheld(); !strings.Contains(why, "not served under --strict") || !strings.Contains(why, "first .ai/repo/a.md") {
			t.Fatalf("the withheld rebuild is said as %q", why)
		}
		write(t, root, ".ai/repo/a.md", "---\nid: a\nkind: rule\ntitle: fixed\n---\n")
		if c := waitChange(t, changes); c.old != first || c.new.Generation != 2 || c.new.State() != "ok" {
			t.Fatalf("generation %d state %s", c.new.Generation, c.new.State())
		}
		if why := l.Withheld(); why != "" {
			t.Fatalf("a served rebuild leaves %q", why)
		}
	})
	t.Run("a degraded rebuild undone is withheld no more", func(t *testing.T) {
		files := map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\n"}
		root, l, _, entries, _ := openWatched(t, files, true)
		write(t, root, ".ai/repo/a.md", "---\nid: a\nkind: rule\ntitle: : broken\n---\n")
		waitLog(t, entries, "degraded layer not served under strict")
		write(t, root, ".ai/repo/a.md", files[".ai/repo/a.md"])
		waitLog(t, entries, "layer unchanged")
		if why := l.Withheld(); why != "" {
			t.Fatalf("a rebuild undone leaves %q", why)
		}
	})
}

// An object that is a link to a file outside .ai/repo changes when that
// file does.
func TestWatchALinkedFile(t *testing.T) {
	files := map[string]string{
		".ai/manifest.yaml":    testManifest,
		".ai/repo/a.md":        "---\nid: a\nkind: rule\n---\nA\n",
		"notes/shared-rule.md": "---\nid: shared\nkind: rule\n---\nold\n",
	}
	root := testtemp.Dir(t)
	writeTree(t, root, files)
	if err := os.Symlink("../../notes/shared-rule.md", filepath.Join(root, ".ai/repo/shared.md")); err != nil {
		t.Fatal(err)
	}
	_, changes, _, _ := watchAt(t, root, false)
	write(t, root, "notes/shared-rule.md", "---\nid: shared\nkind: rule\n---\nnew\n")
	c := waitChange(t, changes)
	if o, _ := c.new.Lookup("majordomus://rule/shared"); o.Body != "new\n" || !reflect.DeepEqual(Changed(c.old, c.new), []string{"majordomus://rule/shared"}) {
		t.Fatalf("generation %d changed %v, body %q", c.new.Generation, Changed(c.old, c.new), o.Body)
	}
}

// A checkout whose .ai is replaced whole (moved away and written again, as
// a switch to a branch that lacks it and back does) is watched anew: gone,
// it lists nothing; back, its edits are seen, the first and the later ones.
func TestWatchAReplacedAIDirectory(t *testing.T) {
	root, _, changes, _, _ := openWatched(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md":     "---\nid: a\nkind: rule\n---\nA\n",
	}, false)
	if err := os.Rename(filepath.Join(root, ".ai"), filepath.Join(root, "ai-gone")); err != nil {
		t.Fatal(err)
	}
	if c := waitChange(t, changes); len(c.new.List("", "")) != 0 {
		t.Fatalf("with .ai gone, %d objects are listed", len(c.new.List("", "")))
	}
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md":     "---\nid: a\nkind: rule\n---\nA, again\n",
	})
	c := waitChange(t, changes)
	if o, _ := c.new.Lookup("majordomus://rule/a"); o.Body != "A, again\n" {
		t.Fatalf("after .ai was replaced, a reads %q", o.Body)
	}
	write(t, root, ".ai/repo/a.md", "---\nid: a\nkind: rule\n---\nA, edited\n")
	c = waitChange(t, changes)
	if o, _ := c.new.Lookup("majordomus://rule/a"); o.Body != "A, edited\n" {
		t.Fatalf("an edit in the new .ai: a reads %q", o.Body)
	}
}

// A layer opened where .ai is not yet (a checkout given by --repo before
// its .ai is written) is watched all the same: once .ai is written, it is
// indexed.
func TestWatchAnAIDirectoryWrittenLater(t *testing.T) {
	root := testtemp.Dir(t)
	_, changes, _, _ := watchAt(t, root, false) // watching, with nothing to watch yet
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md":     "---\nid: a\nkind: rule\n---\nA\n",
	})
	for {
		if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/a"); ok {
			return
		}
	}
}

// A burst of writes while rebuilds run leaves the watch listening: fsnotify
// waits for each event to be taken, and on Windows it answers Add and
// Remove only between events, so a watch that added watches on the
// goroutine that takes events waited on itself for ever.
func TestWatchAfterABurstOfWrites(t *testing.T) {
	files := map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\nA\n"}
	for d := range 40 {
		files[fmt.Sprintf(".ai/repo/d%02d/x.md", d)] = fmt.Sprintf("---\nid: x%d\nkind: rule\n---\n", d)
	}
	root, _, changes, _, _ := openWatched(t, files, false)
	done := make(chan struct{})
	var writers sync.WaitGroup
	for g := range 4 {
		writers.Go(func() {
			for i := range 400 {
				d := (i*4 + g) % 40
				write(t, root, fmt.Sprintf(".ai/repo/d%02d/y%d.md", d, i%50), fmt.Sprintf("---\nid: y%d-%d\nkind: rule\n---\n%d\n", d, i%50, i))
			}
		})
	}
	go func() { writers.Wait(); close(done) }()
	for waiting := true; waiting; { // its rebuilds are taken as they come
		select {
		case <-changes:
		case <-done:
			waiting = false
		}
	}
	write(t, root, ".ai/repo/a.md", "---\nid: a\nkind: rule\n---\nA, after the burst\n")
	waitBody(t, changes, "majordomus://rule/a", "A, after the burst\n")
}

// A watch that starts while its files are being written starts all the
// same: on Windows, fsnotify's Add waits for its reader, which waits until
// its event is taken, so events are taken from before the first Add.
func TestAWatchStartsWhileItsFilesAreWritten(t *testing.T) {
	files := map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": "---\nid: a\nkind: rule\n---\n"}
	for d := range 100 {
		files[fmt.Sprintf(".ai/repo/d%03d/x.md", d)] = fmt.Sprintf("---\nid: x%d\nkind: rule\n---\n", d)
	}
	root := testtemp.Dir(t)
	writeTree(t, root, files)
	l, err := Open(Config{Root: root, Debounce: 20 * time.Millisecond, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var writer sync.WaitGroup
	writer.Go(func() { // as the watch starts: more events than fsnotify holds
		for i := range 3000 {
			write(t, root, ".ai/repo/a.md", fmt.Sprintf("---\nid: a\nkind: rule\n---\n%d\n", i))
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- l.Watch(ctx, func(*Index, *Index) {
			select {
			case changed <- struct{}{}:
			default:
			}
		})
	}()
	writer.Wait()
	select {
	case <-changed: // it set up, and took the writes
	case <-time.After(waitFor):
		t.Errorf("no change within %v of the writes made as the watch started", waitFor)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitFor):
		t.Fatal("the watch did not end with its context")
	}
}
