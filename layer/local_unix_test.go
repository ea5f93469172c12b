//go:build unix

package layer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// .ai/local is never indexed, whatever link in the layer leads there: a
// file linked into it, .ai/repo linked to .ai above it or into it, or a
// link straight to where a linked .ai/local really is. (Its notes were
// served to every agent as the layer's objects.)
func TestNothingLinkedIntoTheLocalHalfIsIndexed(t *testing.T) {
	const secret = "---\nid: secret\nkind: note\n---\nTOKEN=abc\n"
	for _, tc := range []struct {
		name  string
		links func(t *testing.T, root string) // made after the tree
		want  string                          // a diagnostic's message holds it
	}{
		{"a file linked into it", func(t *testing.T, root string) {
			link(t, "../local/secret.md", filepath.Join(root, ".ai/repo/innocent.md"))
		}, "symbolic link into .ai/local"},
		{".ai/repo linked to .ai", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".ai/repo"))
			link(t, ".", filepath.Join(root, ".ai/repo"))
		}, "is .ai/local, which is never indexed"},
		{".ai/repo linked into it", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".ai/repo"))
			link(t, "local", filepath.Join(root, ".ai/repo"))
		}, "leads into .ai/local"},
		{"a link through a link in it", func(t *testing.T, root string) {
			writeTree(t, root, map[string]string{"notes/one.md": secret})
			link(t, "../../notes/one.md", filepath.Join(root, ".ai/local/current.md"))
			link(t, "../local/current.md", filepath.Join(root, ".ai/repo/innocent.md"))
		}, "symbolic link into .ai/local"},
		{"a link through a linked .ai/local and out", func(t *testing.T, root string) {
			private := filepath.Join(filepath.Dir(root), "private")
			writeTree(t, private, map[string]string{"secret.md": secret, "inner/keep": ""})
			os.RemoveAll(filepath.Join(root, ".ai/local"))
			link(t, filepath.Join(private, "inner"), filepath.Join(root, ".ai/local"))
			link(t, "../local/../secret.md", filepath.Join(root, ".ai/repo/innocent.md"))
		}, "symbolic link into .ai/local"},
		{"a link to where a linked .ai/local is", func(t *testing.T, root string) {
			elsewhere := filepath.Join(filepath.Dir(root), "elsewhere")
			if err := os.Rename(filepath.Join(root, ".ai/local"), elsewhere); err != nil {
				t.Fatal(err)
			}
			link(t, elsewhere, filepath.Join(root, ".ai/local"))
			link(t, filepath.Join(elsewhere, "secret.md"), filepath.Join(root, ".ai/repo/innocent.md"))
		}, "symbolic link into .ai/local"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := filepath.Join(testtemp.Dir(t), "checkout")
			writeTree(t, root, map[string]string{
				".ai/manifest.yaml":    testManifest,
				".ai/repo/rules/a.md":  "---\nid: a\nkind: rule\n---\n",
				".ai/local/secret.md":  secret,
				".ai/local/state/x.md": secret,
			})
			tc.links(t, root)
			ix, err := Build(root, 1)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range ix.Objects {
				if o.ID == "secret" {
					t.Fatalf("%s from .ai/local is an object (%s); diagnostics %v", o.Path, o.URI, ix.Diagnostics)
				}
			}
			said := false
			for _, d := range ix.Diagnostics {
				said = said || strings.Contains(d.Message, tc.want)
			}
			if !said {
				t.Fatalf("no diagnostic says %q: %v", tc.want, ix.Diagnostics)
			}
		})
	}
}

// What .ai/local is decides what is skipped: made (or moved away) while
// the layer is watched, it is a change. (An object whose link now led into
// it stayed served until an unrelated edit.)
func TestAnObjectLinkedWhereALocalHalfIsMadeIsDropped(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""),
		"private/s.md": rule("s", "private\n"),
	})
	link(t, "../../private/s.md", filepath.Join(root, ".ai/repo/s.md"))
	l, changes, _, _ := watchAt(t, root, false)
	if _, ok := l.Current().Lookup("majordomus://rule/s"); !ok {
		t.Fatal("s, linked to a file outside, is not served at first")
	}
	link(t, "../private", filepath.Join(root, ".ai/local"))
	for {
		if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/s"); !ok {
			return
		}
	}
}

// A client started in a directory that was removed is told why no
// checkout was found, not only that "." was not one.
func TestFindCheckoutFromARemovedWorkingDirectory(t *testing.T) {
	gone := filepath.Join(testtemp.Dir(t), "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	_, err := FindCheckout("")
	if !errors.Is(err, ErrNoCheckout) || !strings.Contains(err.Error(), "cannot tell the working directory") {
		t.Fatalf("FindCheckout in a removed directory: %v", err)
	}
}
