// Package testtemp gives tests a temporary directory that is removed with
// plain file removals, one name at a time. testing.T.TempDir removes its
// directory with os.RemoveAll, which wine 8 does not support (Go 1.26
// deletes with FileDispositionInformationEx there, which wine lacks), so
// the Windows tests that run under wine in CI use this instead.
package testtemp

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Dir returns a new directory that is removed, with all it holds, when the
// test and its subtests end.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "majordomus-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := RemoveAll(dir); err != nil {
			t.Errorf("removing the test's directory: %v", err)
		}
	})
	return dir
}

// RemoveAll removes dir and everything below it, deepest first, making
// directories writable on the way (a test may have made one read-only):
// os.RemoveAll for tests that run under wine.
func RemoveAll(dir string) error {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == dir {
				return nil
			}
			return err
		}
		if d.IsDir() {
			os.Chmod(p, 0o700)
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return err
	}
	for _, p := range slices.Backward(names) {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
