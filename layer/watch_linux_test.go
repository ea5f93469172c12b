package layer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// kernelWatches counts the inotify watches this process holds, as the
// kernel keeps them (every inotify descriptor's fdinfo lists one line a
// watch).
func kernelWatches(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fdinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		b, _ := os.ReadFile(filepath.Join("/proc/self/fdinfo", fd.Name()))
		n += strings.Count(string(b), "inotify wd:")
	}
	return n
}

// A .ai moved away keeps its directories, and every watch on them went
// with them: they are dropped, not kept for as long as the moved copy
// lives (a checkout's branches switched back and forth would pile them up).
func TestWatchesOfAMovedAwayAIAreDropped(t *testing.T) {
	root := testtemp.Dir(t)
	files := map[string]string{".ai/manifest.yaml": testManifest}
	for _, id := range []string{"a", "b", "c"} {
		files[".ai/repo/"+id+"/"+id+".md"] = "---\nid: " + id + "\nkind: rule\n---\n"
	}
	writeTree(t, root, files)
	_, changes, _, _ := watchAt(t, root, false)
	before := kernelWatches(t)
	for i := range 3 {
		if err := os.Rename(filepath.Join(root, ".ai"), filepath.Join(root, "stash"+string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
		waitChange(t, changes)
		writeTree(t, root, files)
		waitChange(t, changes)
	}
	if after := kernelWatches(t); after != before {
		t.Fatalf("%d watches before .ai was moved away and written again three times, %d after", before, after)
	}
}

// A .ai link re-pointed leaves its old target unwatched.
func TestWatchesOfARepointedLinksOldTargetAreDropped(t *testing.T) {
	root := testtemp.Dir(t)
	for _, dir := range []string{"ai-a", "ai-b"} {
		writeTree(t, root, map[string]string{
			dir + "/manifest.yaml": testManifest,
			dir + "/repo/a.md":     "---\nid: a\nkind: rule\n---\n" + dir + "\n",
		})
	}
	link(t, "ai-a", filepath.Join(root, ".ai"))
	_, changes, _, _ := watchAt(t, root, false)
	before := kernelWatches(t)
	for _, to := range []string{"ai-b", "ai-a", "ai-b"} {
		repoint(t, to, filepath.Join(root, ".ai"))
		if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != to+"\n" {
			t.Fatalf("re-pointed at %s, a reads %q", to, o.Body)
		}
	}
	if after := kernelWatches(t); after != before {
		t.Fatalf("%d watches before .ai was re-pointed three times, %d after", before, after)
	}
}

// The directory of a file an object's link names is watched while the
// link is there, and not after: otherwise every change beside that file
// (a checkout's root, say) would wake the watch for as long as it runs.
func TestALinkedFilesDirectoryIsUnwatchedWithItsLink(t *testing.T) {
	root, _, changes, _, _ := openWatched(t, map[string]string{
		".ai/manifest.yaml": testManifest,
		".ai/repo/a.md":     "---\nid: a\nkind: rule\n---\n",
		"notes/b.md":        "---\nid: b\nkind: rule\n---\n",
	}, false)
	before := kernelWatches(t)
	link := filepath.Join(root, ".ai", "repo", "b.md")
	if err := os.Symlink(filepath.Join("..", "..", "notes", "b.md"), link); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/b"); !ok {
		t.Fatal("the linked object is not indexed")
	}
	if with := kernelWatches(t); with != before+1 {
		t.Fatalf("%d watches before the link, %d with it: its file's directory is not watched", before, with)
	}
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitChange(t, changes).new.Lookup("majordomus://rule/b"); ok {
		t.Fatal("the object is still indexed after its link was removed")
	}
	if after := kernelWatches(t); after != before {
		t.Fatalf("%d watches before the link was made, %d after it was removed", before, after)
	}
}

// A directory under .ai moved away takes its watches with it, as .ai
// does: they are dropped too.
func TestWatchesOfAMovedRepoAreDropped(t *testing.T) {
	files := map[string]string{".ai/manifest.yaml": testManifest}
	for _, id := range []string{"a", "b", "c"} {
		files[".ai/repo/"+id+"/"+id+".md"] = "---\nid: " + id + "\nkind: rule\n---\n"
	}
	root, _, changes, _, _ := openWatched(t, files, false)
	before := kernelWatches(t)
	if err := os.Rename(filepath.Join(root, ".ai/repo"), filepath.Join(root, "old-repo")); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changes)
	writeTree(t, root, files)
	waitChange(t, changes)
	if after := kernelWatches(t); after != before {
		t.Fatalf("%d watches before .ai/repo was moved away and written again, %d after", before, after)
	}
}

// A .ai/repo that leads to another tree though no event under .ai tells
// (a directory on its way swapped, a link on its way re-pointed, the old
// tree kept) leaves the old tree's directories unwatched: their watches
// went with them, and would pile up, one a directory, at each new build
// or release, every change there waking the watch.
func TestWatchesOfARepoTargetSwappedAreDropped(t *testing.T) {
	t.Run("swapped", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest,
			"build/ai/one/a.md": rule("a", "A\n"), "build.new/ai/two/a.md": rule("a", "A, rebuilt\n")})
		link(t, "../build/ai", filepath.Join(root, ".ai/repo"))
		_, changes, _, _ := watchAt(t, root, false)
		before := kernelWatches(t)
		if err := os.Rename(filepath.Join(root, "build"), filepath.Join(root, "build.old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(root, "build.new"), filepath.Join(root, "build")); err != nil {
			t.Fatal(err)
		}
		waitBody(t, changes, "majordomus://rule/a", "A, rebuilt\n")
		if after := kernelWatches(t); after != before {
			t.Fatalf("%d watches before .ai/repo's directory was swapped, %d after", before, after)
		}
	})
	t.Run("re-pointed", func(t *testing.T) {
		root := testtemp.Dir(t)
		writeTree(t, root, map[string]string{".ai/manifest.yaml": testManifest,
			"releases/v1/one/a.md": rule("a", "one\n"), "releases/v2/two/a.md": rule("a", "two\n")})
		link(t, "v1", filepath.Join(root, "releases/current"))
		link(t, "../releases/current", filepath.Join(root, ".ai/repo"))
		_, changes, _, _ := watchAt(t, root, false)
		before := kernelWatches(t)
		repoint(t, "v2", filepath.Join(root, "releases/current"))
		waitBody(t, changes, "majordomus://rule/a", "two\n")
		if after := kernelWatches(t); after != before {
			t.Fatalf("%d watches before .ai/repo's link was re-pointed, %d after", before, after)
		}
	})
}
