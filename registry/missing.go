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
// link that leads nowhere (dangling, a loop), path itself too, blocks the
// way: what cannot be read is never read as nothing.
func BlockedPath(path string) error {
	if err := leadsNowhere(path); err != nil {
		return err
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.IsDir() {
				return nil
			}
			return fmt.Errorf("%s: %s is not a directory", path, dir)
		}
		if err := leadsNowhere(dir); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

// leadsNowhere says so when path is a link (a junction on Windows) that
// cannot be followed; nil when it is anything else, or nothing (a file or
// directory made since is no link).
func leadsNowhere(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsDir() || fi.Mode().IsRegular() {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%s is a link that leads nowhere (%v)", path, err)
	}
	return nil
}
