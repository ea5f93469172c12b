package registry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// nextChange waits (at most 10 s) for a Change that satisfies want.
func nextChange(t *testing.T, ch <-chan Change, what string, want func(Change) bool) Change {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case c, ok := <-ch:
			if !ok {
				t.Fatalf("watch ended while waiting for %s", what)
			}
			if want(c) {
				return c
			}
		case <-timeout:
			t.Fatalf("no change within 10s: %s", what)
		}
	}
}

func holding(raw []byte) func(Change) bool {
	return func(c Change) bool { return c.Found == Regular && bytes.Equal(c.Raw, raw) }
}

func TestWatch_SeesRenameOverInPlaceWriteAndRemove(t *testing.T) {
	path := leasePath(t)
	ch := watchedLease(t, path, docBytes(t, nil))

	replaced := docBytes(t, func(l *Lease) { l.Instance = "ffffffffffffffffffffffffffffffff" })
	tmp := filepath.Join(filepath.Dir(path), ".tmp")
	writeFile(t, tmp, replaced)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "a rename over the lease", holding(replaced))

	corrupt := []byte("{torn")
	if err := os.WriteFile(path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "an in-place write", holding(corrupt))

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "a removal", func(c Change) bool { return c.Found == Missing })
}

func TestWatch_TheFallbackAloneNoticesChanges(t *testing.T) {
	path := leasePath(t)
	writeFile(t, path, docBytes(t, nil))
	ctx, cancel := context.WithCancel(context.Background())
	ch := Poll(ctx, path, 10*time.Millisecond)
	stopWatch(t, cancel, ch)
	nextChange(t, ch, "the initial state", func(c Change) bool { return c.Found == Regular })
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	nextChange(t, ch, "a removal seen by polling", func(c Change) bool { return c.Found == Missing })
	writeFile(t, path, nil)
	nextChange(t, ch, "an empty file seen by polling", holding(nil))
}

func TestWatch_EndsWithItsContext(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, path, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the watch did not end with its context")
		}
	}
}

func TestWatch_NeedsTheDirectory(t *testing.T) {
	path := Path(filepath.Join(testtemp.Dir(t), "missing"), "")
	if _, err := Watch(context.Background(), path, 0, 0); err == nil {
		t.Error("Watch of a lease in a missing directory succeeded")
	}
}

// stopWatch ends the watch when the test ends and waits for it to let go
// of the lease directory, before the directory is removed (Windows, and
// wine, cannot remove a directory still watched).
// watchedLease writes raw as the lease at path and watches it, past its
// first Change. The fallback read is an hour away: what a test sees then
// is seen through fsnotify.
func watchedLease(t *testing.T, path string, raw []byte) <-chan Change {
	t.Helper()
	writeFile(t, path, raw)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, path, 10*time.Millisecond, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stopWatch(t, cancel, ch)
	nextChange(t, ch, "the initial state", holding(raw))
	return ch
}

func stopWatch(t *testing.T, cancel context.CancelFunc, ch <-chan Change) {
	t.Cleanup(func() {
		cancel()
		for range ch {
		}
	})
}

// A directory on the lease's way made again is watched again while events
// pour in around it, and the watch goes on: on Windows fsnotify's Add
// waits for its reader, which waits for its events to be taken, so the
// loop that adds must not be the one that takes them.
func TestWatch_WatchesItsDirectoryAgainWhileEventsPourIn(t *testing.T) {
	path := leasePath(t)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, path, time.Millisecond, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	stopWatch(t, cancel, ch)
	nextChange(t, ch, "the initial state", func(c Change) bool { return c.Found == Missing })
	beside := filepath.Join(filepath.Dir(dir), "beside")
	for i := range 50 {
		for j := range 20 { // events in a watched directory, none of them heeded
			if err := os.WriteFile(beside, []byte{byte(j)}, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(dir, fmt.Sprintf("%s-%d", dir, i)); err != nil { // moved away, as a removal would
			t.Fatalf("round %d: %v", i, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	raw := docBytes(t, nil)
	writeFile(t, path, raw)
	nextChange(t, ch, "the lease written after it all", holding(raw))
}
