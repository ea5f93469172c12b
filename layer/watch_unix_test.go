//go:build unix

package layer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A .ai that is a link, re-pointed at another directory (ln -sfn), is
// rebuilt from there and watched there: the link's own watch followed it
// to the old target, which the re-pointing leaves.
func TestWatchARepointedAILink(t *testing.T) {
	root := testtemp.Dir(t)
	for dir, body := range map[string]string{"ai-a": "A\n", "ai-b": "B\n"} {
		writeTree(t, root, map[string]string{
			dir + "/manifest.yaml": testManifest,
			dir + "/repo/a.md":     "---\nid: a\nkind: rule\n---\n" + body,
		})
	}
	link(t, "ai-a", filepath.Join(root, ".ai"))
	_, changes, _, _ := watchAt(t, root, false)

	repoint(t, "ai-b", filepath.Join(root, ".ai"))
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != "B\n" {
		t.Fatalf("after .ai was re-pointed, a reads %q", o.Body)
	}
	write(t, root, "ai-b/repo/a.md", "---\nid: a\nkind: rule\n---\nB, edited\n")
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != "B, edited\n" {
		t.Fatalf("an edit where .ai now points: a reads %q", o.Body)
	}
}

// rule is an object of kind rule, id, with body.
func rule(id, body string) string { return "---\nid: " + id + "\nkind: rule\n---\n" + body }

// link makes a symbolic link at name to target, or fails the test.
func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// repoint points the link at name to target in one step, as ln -sfn and
// a checkout of another branch do: a new link renamed over it.
func repoint(t *testing.T, target, name string) {
	t.Helper()
	link(t, target, name+".new")
	if err := os.Rename(name+".new", name); err != nil {
		t.Fatal(err)
	}
}

// A root reached through a link (a working directory under a linked
// path), whose .ai is a link re-pointed, is followed each time, though an
// object links a file of the root by its other name: the root is watched
// under one name, its own.
func TestWatchARepointedAILinkUnderALinkedRoot(t *testing.T) {
	for i := range 8 { // which name was watched first once depended on a map's order
		base := testtemp.Dir(t)
		real := filepath.Join(base, "real")
		writeTree(t, real, map[string]string{
			"README.md":          rule("readme", "R\n"),
			"ai-a/manifest.yaml": testManifest, "ai-a/repo/a.md": rule("a", "A\n"),
			"ai-b/manifest.yaml": testManifest, "ai-b/repo/a.md": rule("a", "B\n"),
		})
		link(t, "../../README.md", filepath.Join(real, "ai-a/repo/readme.md"))
		link(t, "ai-a", filepath.Join(real, ".ai"))
		root := filepath.Join(base, "via")
		link(t, real, root)
		_, changes, _, _ := watchAt(t, root, false)
		repoint(t, "ai-b", filepath.Join(root, ".ai"))
		if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != "B\n" {
			t.Fatalf("trial %d: re-pointed at ai-b, a reads %q", i, o.Body)
		}
	}
}

// An object's link whose file is removed, then written again (a checkout
// of another branch and back), is indexed again; and a link to a file in
// the directory .ai links to is followed, by the name its edits come by.
func TestWatchALinkedFileGoneAndBack(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		"ai/manifest.yaml": testManifest,
		"ai/repo/a.md":     rule("a", ""),
		"ai/shared.md":     rule("s", "S\n"),
		"notes/b.md":       rule("b", "B\n"),
	})
	link(t, filepath.Join("..", "shared.md"), filepath.Join(root, "ai/repo/s.md"))
	link(t, "../../notes/b.md", filepath.Join(root, "ai/repo/b.md"))
	link(t, "ai", filepath.Join(root, ".ai"))
	_, changes, _, _ := watchAt(t, root, false)
	write(t, root, "ai/shared.md", rule("s", "S, edited\n"))
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/s"); o.Body != "S, edited\n" {
		t.Fatalf("an edit of a file linked in .ai's target: s reads %q", o.Body)
	}
	if err := os.Remove(filepath.Join(root, "notes/b.md")); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/b"); ok {
		t.Fatal("b is indexed with its file gone")
	}
	write(t, root, "notes/b.md", rule("b", "B, again\n"))
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/b"); o.Body != "B, again\n" {
		t.Fatalf("its file written again, b reads %q", o.Body)
	}
}

// A link whose file is not there yet names the file it would resolve to,
// from the directory the link really is in, and its directory by the name
// the watches give it: written (and edited later), the file is indexed,
// whether .ai is a link elsewhere or the root is reached through one.
func TestWatchALinkWhoseFileIsWrittenLater(t *testing.T) {
	t.Run(".ai a link", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{
			"sub/ai/manifest.yaml": testManifest,
			"sub/ai/repo/a.md":     rule("a", ""),
			"sub/notes/keep":       "",
			"notes/keep":           "",
		})
		link(t, "../../notes/b.md", filepath.Join(root, "sub/ai/repo/b.md"))
		link(t, "sub/ai", filepath.Join(root, ".ai"))
		_, changes, _, _ := watchAt(t, root, false)
		write(t, root, "sub/notes/b.md", rule("b", "B\n"))
		if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/b"); o.Body != "B\n" {
			t.Fatalf("b reads %q", o.Body)
		}
	})
	t.Run("the root reached through a link", func(t *testing.T) {
		base := testtemp.Dir(t)
		real := filepath.Join(base, "real")
		writeTree(t, real, map[string]string{
			".ai/manifest.yaml": testManifest,
			".ai/repo/a.md":     rule("a", ""),
			"notes/keep":        "",
		})
		link(t, "../../notes/b.md", filepath.Join(real, ".ai/repo/b.md"))
		root := filepath.Join(base, "via")
		link(t, real, root)
		_, changes, _, _ := watchAt(t, root, false)
		for _, body := range []string{"B\n", "B, edited\n"} {
			write(t, root, "notes/b.md", rule("b", body))
			if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/b"); o.Body != body {
				t.Fatalf("b reads %q, want %q", o.Body, body)
			}
		}
	})
}

// A directory watched for a file an object links to, which .ai then
// becomes (a link to it), stays watched: the kernel keeps one watch a
// directory, under the name it was first given.
func TestWatchALinkedDirectoryThatBecomesAI(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", "old .ai\n"),
		"ai/manifest.yaml": testManifest, "ai/repo/a.md": rule("a", "ai\n"), "ai/x.md": rule("x", "X\n"),
	})
	link(t, "../../ai/x.md", filepath.Join(root, ".ai/repo/x.md"))
	link(t, "../x.md", filepath.Join(root, "ai/repo/x.md"))
	_, changes, _, _ := watchAt(t, root, false)
	if err := os.Rename(filepath.Join(root, ".ai"), filepath.Join(root, "old-ai")); err != nil {
		t.Fatal(err)
	}
	link(t, "ai", filepath.Join(root, ".ai"))
	waitBody(t, changes, "majordomus://rule/a", "ai\n")
	write(t, root, "ai/x.md", rule("x", "X, edited\n"))
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/x"); o.Body != "X, edited\n" {
		t.Fatalf("x reads %q", o.Body)
	}
}

// A root reached through a link re-pointed elsewhere is watched anew: the
// old directory's watch, kept under the root's name, would take the place
// of the watch on that directory by its own name (a file the new root's
// objects link to).
func TestWatchARootRepointed(t *testing.T) {
	base := testtemp.Dir(t)
	a, b := filepath.Join(base, "A"), filepath.Join(base, "B")
	writeTree(t, a, map[string]string{"README.md": rule("readme", "R\n"), ".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", "A\n")})
	link(t, "../../README.md", filepath.Join(a, ".ai/repo/readme.md"))
	writeTree(t, b, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", "B\n")})
	link(t, filepath.Join(a, "README.md"), filepath.Join(b, ".ai/repo/readme.md"))
	root := filepath.Join(base, "via")
	link(t, a, root)
	_, changes, _, _ := watchAt(t, root, false)
	repoint(t, b, root)
	write(t, a, ".ai/repo/a.md", rule("a", "A, edited\n")) // heard by the old watches: a refresh
	waitBody(t, changes, "majordomus://rule/a", "B\n")
	write(t, a, "README.md", rule("readme", "R, edited\n"))
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/readme"); o.Body != "R, edited\n" {
		t.Fatalf("readme reads %q", o.Body)
	}
}
