package registry

import (
	"fmt"
	"os"
	"path/filepath"
)

// BlockedPath tells a path that is missing from one that cannot exist: it
// returns an error when the nearest existing ancestor of path is not a
// directory. Unix says so itself (ENOTDIR); Windows reports both as "not
// found", and "no lease" or "no registry" must not be read where a file
// blocks the way to one. A link to a directory leads on (a checkout's .ai
// may be one; links below .ai/local are refused before, by [Trusted]); a
// link that leads nowhere (dangling, a loop) blocks the way.
func BlockedPath(path string) error {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.IsDir() {
				return nil
			}
			return fmt.Errorf("%s: %s is not a directory", path, dir)
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			return fmt.Errorf("%s: %s is a link that leads to no directory (%v)", path, dir, err)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}
