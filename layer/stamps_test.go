package layer

import (
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"os"
	"path/filepath"
	"testing"
)

var stampedTree = map[string]string{
	".ai/manifest.yaml":   testManifest,
	".ai/repo/rules/a.md": "---\nid: a\nkind: rule\n---\nA\n",
	".ai/repo/rules/b.md": "---\nid: b\nkind: rule\n---\nB\n",
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
			if err := testtemp.RemoveAll(filepath.Join(root, ".ai/repo/rules")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, root, map[string]string{".ai/repo/rules": "not a directory"})
		},
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			root := testtemp.Dir(t)
			writeTree(t, root, stampedTree)
			_, src, err := build(root, "", 1)
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

// Files that could not be stamped are never trusted, even when a change
// leaves as many files as were stamped (here none: every file removed).
func TestUnstampedFilesAreNeverTrusted(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, stampedTree)
	_, src, err := build(root, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	clear(src.files) // as where the system gives no stamps
	for _, rel := range []string{".ai/repo/rules/a.md", ".ai/repo/rules/b.md"} {
		if err := os.Remove(filepath.Join(root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	if unchangedSince(root, src, 0) {
		t.Fatal("a tree emptied of its unstamped files was proved unchanged")
	}
}
