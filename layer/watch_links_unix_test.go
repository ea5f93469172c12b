//go:build unix

package layer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// An object's link to a file in a dot-directory of .ai/repo, which the
// walk of the tree does not watch, is watched as a file outside it.
func TestWatchALinkIntoADotDirectory(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/.drafts/s.md": rule("s", "old\n")})
	link(t, ".drafts/s.md", filepath.Join(root, ".ai/repo/s.md"))
	_, changes, _, _ := watchAt(t, root, false)
	write(t, root, ".ai/repo/.drafts/s.md", rule("s", "new\n"))
	waitBody(t, changes, "majordomus://rule/s", "new\n")
}

// An object's link to a link outside .ai/repo follows the second link when
// it is re-pointed: each link on the way is watched, not only the file at
// its end.
func TestWatchALinkThroughALinkRepointed(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""),
		"notes/one.md": rule("s", "one\n"), "notes/two.md": rule("s", "two\n"),
	})
	link(t, "../notes/one.md", filepath.Join(root, "notes/current.md"))
	link(t, "../../notes/current.md", filepath.Join(root, ".ai/repo/s.md"))
	_, changes, _, _ := watchAt(t, root, false)
	repoint(t, "two.md", filepath.Join(root, "notes/current.md"))
	waitBody(t, changes, "majordomus://rule/s", "two\n")
}

// What no watch can hear come back is looked for: a .ai/repo that links a
// directory removed and made again (a build's output), and an object's
// link into a directory removed and made again (a branch without it and
// back), or made only after the watch began.
func TestWatchLinksThroughDirectoriesThatComeBack(t *testing.T) {
	t.Run(".ai/repo", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, "build/ai/a.md": rule("a", "A\n")})
		link(t, "../build/ai", filepath.Join(root, ".ai/repo"))
		_, changes, _, _ := watchAt(t, root, false)
		if err := os.RemoveAll(filepath.Join(root, "build")); err != nil {
			t.Fatal(err)
		}
		if c := waitChange(t, changes); len(c.new.Objects) != 0 {
			t.Fatalf("with .ai/repo's directory gone, %d objects", len(c.new.Objects))
		}
		write(t, root, "build/ai/a.md", rule("a", "A, rebuilt\n"))
		waitBody(t, changes, "majordomus://rule/a", "A, rebuilt\n")
	})
	t.Run("an object's link", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""), "notes/s.md": rule("s", "S\n")})
		link(t, "../../notes/s.md", filepath.Join(root, ".ai/repo/s.md"))
		link(t, "../../later/l.md", filepath.Join(root, ".ai/repo/l.md"))
		_, changes, _, _ := watchAt(t, root, false)
		if err := os.RemoveAll(filepath.Join(root, "notes")); err != nil {
			t.Fatal(err)
		}
		if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/s"); ok {
			t.Fatal("s is indexed with its directory gone")
		}
		write(t, root, "notes/s.md", rule("s", "S, again\n"))
		waitBody(t, changes, "majordomus://rule/s", "S, again\n")
		write(t, root, "later/l.md", rule("l", "L\n"))
		waitBody(t, changes, "majordomus://rule/l", "L\n")
	})
}

// A relative link whose ".." comes after a linked directory leads where
// the kernel takes it, up from the link's target: .ai/repo/s.md ->
// ../../lnk/../notes/s.md with lnk -> far/away is far/notes/s.md, not
// the notes/s.md its text spells, and that file's edits are heard.
func TestWatchALinkUpFromALinkedDirectory(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""),
		"far/away/x": "x", "far/notes/s.md": rule("s", "S\n"), "notes/other": "o"})
	link(t, "far/away", filepath.Join(root, "lnk"))
	link(t, "../../lnk/../notes/s.md", filepath.Join(root, ".ai/repo/s.md"))
	_, changes, _, _ := watchAt(t, root, false)
	write(t, root, "far/notes/s.md", rule("s", "S, edited\n"))
	waitBody(t, changes, "majordomus://rule/s", "S, edited\n")
}

// A .ai/repo that links through a link follows it re-pointed (ln -sfn),
// as an object's link does: .ai/repo -> ../current -> build-a, then b;
// written ../current/ and ../current/. too.
func TestWatchARepoLinkThroughALinkRepointed(t *testing.T) {
	for _, via := range []string{"../current", "../current/", "../current/."} {
		t.Run(via, func(t *testing.T) {
			root := testtemp.Dir(t)
			writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest,
				"build-a/a.md": rule("a", "A\n"), "build-b/a.md": rule("a", "B\n")})
			link(t, "build-a", filepath.Join(root, "current"))
			link(t, via, filepath.Join(root, ".ai/repo"))
			_, changes, _, _ := watchAt(t, root, false)
			repoint(t, "build-b", filepath.Join(root, "current"))
			waitBody(t, changes, "majordomus://rule/a", "B\n")
		})
	}
}

// A directory watched for what links lead to, swapped whole by renames
// (a build's output made beside and moved into place), is watched anew:
// the watch followed the old directory away, and its files' names with
// it, so only the directory's own move is heard.
func TestWatchADirectorySwappedUnderALink(t *testing.T) {
	swap := func(t *testing.T, root, dir string) {
		t.Helper()
		if err := os.Rename(filepath.Join(root, dir), filepath.Join(root, dir+".old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(root, dir+".new"), filepath.Join(root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run(".ai/repo", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, "build/ai/a.md": rule("a", "A\n"),
			"build.new/ai/a.md": rule("a", "A, rebuilt\n")})
		link(t, "../build/ai", filepath.Join(root, ".ai/repo"))
		_, changes, _, _ := watchAt(t, root, false)
		swap(t, root, "build")
		waitBody(t, changes, "majordomus://rule/a", "A, rebuilt\n")
	})
	t.Run(".ai", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{"cfg/ai/manifest.yaml": testManifest, "cfg/ai/repo/a.md": rule("a", "A\n"),
			"cfg.new/ai/manifest.yaml": testManifest, "cfg.new/ai/repo/a.md": rule("a", "A, rebuilt\n")})
		link(t, "cfg/ai", filepath.Join(root, ".ai"))
		_, changes, _, _ := watchAt(t, root, false)
		swap(t, root, "cfg")
		waitBody(t, changes, "majordomus://rule/a", "A, rebuilt\n")
	})
	t.Run("an object's link", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""),
			"notes/s.md": rule("s", "S\n"), "notes.new/s.md": rule("s", "S, new\n")})
		link(t, "../../notes/s.md", filepath.Join(root, ".ai/repo/s.md"))
		_, changes, _, _ := watchAt(t, root, false)
		swap(t, root, "notes")
		waitBody(t, changes, "majordomus://rule/s", "S, new\n")
	})
}

// An object's link through a directory that is a link follows it
// re-pointed: .ai/repo/s.md -> ../../releases/current/s.md, with current a
// link to v1, then to v2 (a "current release" link).
func TestWatchALinkThroughADirectoryLinkRepointed(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest, ".ai/repo/a.md": rule("a", ""),
		"releases/v1/s.md": rule("s", "one\n"), "releases/v2/s.md": rule("s", "two\n")})
	link(t, "v1", filepath.Join(root, "releases/current"))
	link(t, "../../releases/current/s.md", filepath.Join(root, ".ai/repo/s.md"))
	_, changes, _, _ := watchAt(t, root, false)
	repoint(t, "v2", filepath.Join(root, "releases/current"))
	waitBody(t, changes, "majordomus://rule/s", "two\n")
}

// An absolute link's hops are the links of its own path, not of the path
// it shares with the link (a checkout reached through a link in a home
// directory, home/proj -> store/proj): that link is not a hop, or the home
// directory would be watched, and its every change wake the watch.
func TestAnAbsoluteLinksHopsLeaveTheSharedPathOut(t *testing.T) {
	base := testtemp.Dir(t)
	writeTree(t, base, map[string]string{"store/proj/.ai/manifest.yaml": testManifest, "store/proj/notes/s.md": rule("s", "S\n")})
	proj := filepath.Join(base, "home", "proj")
	if err := os.MkdirAll(filepath.Dir(proj), 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, "../store/proj", proj)
	if err := os.MkdirAll(filepath.Join(proj, ".ai/repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	link(t, filepath.Join(proj, "notes/s.md"), filepath.Join(proj, ".ai/repo/s.md"))
	hops, whole := linkHops(filepath.Join(proj, ".ai/repo/s.md"))
	if !whole || len(hops) != 1 || !strings.HasSuffix(hops[0], filepath.Join("store", "proj", "notes", "s.md")) {
		t.Errorf("hops %q (whole %v); want only the file, in store/proj", hops, whole)
	}
}

// A .ai/repo that links into .ai/local is served as an empty, degraded
// index and watched all the same (a watch that met one panicked, taking
// every process of the checkout down), and is indexed once re-pointed.
func TestWatchARepoLinkedIntoLocal(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest,
		".ai/local/notes/s.md": rule("s", "secret\n"), "build/a.md": rule("a", "A\n")})
	link(t, "local/notes", filepath.Join(root, ".ai/repo"))
	_, changes, _, _ := watchAt(t, root, false)
	repoint(t, "../build", filepath.Join(root, ".ai/repo"))
	waitBody(t, changes, "majordomus://rule/a", "A\n")
}

// A .ai that links through a link follows it re-pointed (ln -sfn), as
// .ai/repo does: .ai -> releases/current -> v1, then v2, v1 kept; the
// change is served, and edits where it now leads are heard.
func TestWatchAnAILinkThroughALinkRepointed(t *testing.T) {
	root := testtemp.Dir(t)
	writeTree(t, root, map[string]string{
		"releases/v1/manifest.yaml": testManifest, "releases/v1/repo/a.md": rule("a", "one\n"),
		"releases/v2/manifest.yaml": testManifest, "releases/v2/repo/a.md": rule("a", "two\n")})
	link(t, "v1", filepath.Join(root, "releases/current"))
	link(t, "releases/current", filepath.Join(root, ".ai"))
	_, changes, _, _ := watchAt(t, root, false)
	repoint(t, "v2", filepath.Join(root, "releases/current"))
	waitBody(t, changes, "majordomus://rule/a", "two\n")
	write(t, root, "releases/v2/repo/a.md", rule("a", "two, edited\n"))
	waitBody(t, changes, "majordomus://rule/a", "two, edited\n")
}
