//go:build unix

package registry

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The lease's directory moved away (swapped for another) is seen through
// fsnotify too (inotify and kqueue report the watched directory's own
// move): the path no longer holds the lease, at once, not at the next
// fallback read. Windows reports no such event; there the fallback read
// notices it within a second.
func TestWatch_SeesItsDirectoryMovedAway(t *testing.T) {
	path := leasePath(t)
	raw := docBytes(t, nil)
	writeFile(t, path, raw)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, path, 10*time.Millisecond, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stopWatch(t, cancel, ch)
	nextChange(t, ch, "the initial state", holding(raw))
	dir := filepath.Dir(path)
	if err := os.Rename(dir, dir+".swapped"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "the lease gone with its directory", func(c Change) bool { return c.Found == Missing })
}
