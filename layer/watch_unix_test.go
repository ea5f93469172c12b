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
	if err := os.Symlink("ai-a", filepath.Join(root, ".ai")); err != nil {
		t.Fatal(err)
	}
	_, changes, _, _ := watchAt(t, root, false)

	tmp := filepath.Join(root, ".ai.new")
	if err := os.Symlink("ai-b", tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, ".ai")); err != nil {
		t.Fatal(err)
	}
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != "B\n" {
		t.Fatalf("after .ai was re-pointed, a reads %q", o.Body)
	}
	write(t, root, "ai-b/repo/a.md", "---\nid: a\nkind: rule\n---\nB, edited\n")
	if o, _ := waitChange(t, changes).new.Lookup("majordomus://rule/a"); o.Body != "B, edited\n" {
		t.Fatalf("an edit where .ai now points: a reads %q", o.Body)
	}
}
