package layer

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

var stampedTree = map[string]string{
	".ai/manifest.yaml":   testManifest,
	".ai/repo/rules/a.md": "---\nid: a\nkind: rule\n---\nA\n",
	".ai/repo/rules/b.md": "---\nid: b\nkind: rule\n---\nB\n",
}

func TestAnUntouchedTreeIsProvedUnchanged(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, stampedTree)
	_, src, err := build(root, 1)
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

func TestEveryKindOfChangeDefeatsTheProof(t *testing.T) {
	changes := map[string]func(t *testing.T, root string){
		"a file added": func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{".ai/repo/rules/c.md": "---\nid: c\nkind: rule\n---\nC\n"})
		},
		"a file removed": func(t *testing.T, root string) {
			if err := os.Remove(filepath.Join(root, ".ai/repo/rules/b.md")); err != nil {
				t.Fatal(err)
			}
		},
		"a file rewritten": func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{".ai/repo/rules/a.md": "---\nid: a\nkind: rule\n---\nA, edited\n"})
		},
		"a file replaced by another of the same size": func(t *testing.T, root string) {
			tmp := filepath.Join(root, ".ai/repo/rules/.a.tmp")
			if err := os.WriteFile(tmp, []byte("---\nid: a\nkind: rule\n---\nZ\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(root, ".ai/repo/rules/a.md")); err != nil {
				t.Fatal(err)
			}
		},
		"a directory made a file": func(t *testing.T, root string) {
			if err := os.RemoveAll(filepath.Join(root, ".ai/repo/rules")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, root, map[string]string{".ai/repo/rules": "not a directory"})
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, stampedTree)
			_, src, err := build(root, 1)
			if err != nil {
				t.Fatal(err)
			}
			change(t, root)
			if unchangedSince(root, src, 0) {
				t.Fatal("the change went unseen")
			}
		})
	}
}

func TestWatchSkipsTheStartRebuildOnlyWhenProvedUnchanged(t *testing.T) {
	root := t.TempDir()
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
