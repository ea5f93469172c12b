//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"testing"
)

// The lease's directory moved away (swapped for another) is seen through
// fsnotify too (inotify and kqueue report the watched directory's own
// move, and its parent's watch the rename): the path no longer holds the
// lease, at once, not at the next fallback read.
func TestWatch_SeesItsDirectoryMovedAway(t *testing.T) {
	path := leasePath(t)
	ch := watchedLease(t, path, docBytes(t, nil))
	dir := filepath.Dir(path)
	if err := os.Rename(dir, dir+".swapped"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "the lease gone with its directory", func(c Change) bool { return c.Found == Missing })
}

// A directory the lease is reached through, moved away from under it (its
// .ai/local renamed, say), takes the lease away with no event in the
// lease's own directory: that too is seen at once, not at the next
// fallback read, and so is a lease made again at the path, and replaced
// there (the directories made again are watched).
func TestWatch_SeesADirectoryOnItsWayMovedAway(t *testing.T) {
	path := leasePath(t)
	ch := watchedLease(t, path, docBytes(t, nil))
	local := filepath.Join(filepath.Dir(path), "..", "..")
	if err := os.Rename(local, local+".moved"); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "the lease gone with .ai/local", func(c Change) bool { return c.Found == Missing })
	again := docBytes(t, func(l *Lease) { l.Instance = "ffffffffffffffffffffffffffffffff" })
	writeFile(t, path, again)
	nextChange(t, ch, "a lease made again at the path", holding(again))
	replaced := docBytes(t, func(l *Lease) { l.Instance = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee" })
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	writeFile(t, tmp, replaced)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "the lease made again replaced", holding(replaced))
}
