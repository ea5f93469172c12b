package testtemp

import (
	"os"
	"path/filepath"
)

// Rooted turns a slash-separated absolute path into one of this system's
// (on Windows on the temporary directory's volume), for tests of path
// logic that must hold on every system.
func Rooted(p string) string { return filepath.VolumeName(os.TempDir()) + filepath.FromSlash(p) }
