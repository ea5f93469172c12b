package registry

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// BlockedPath tells a path that is missing from one that cannot exist: it
// returns an error when the nearest existing ancestor of path is not a
// directory. Unix says so itself (ENOTDIR); Windows reports both as "not
// found", and "no lease" or "no registry" must not be read where a file
// blocks the way to one. A link to a directory leads on (a checkout's .ai
// may be one; links below .ai/local are refused before, by [Trusted]); a
// link that leads nowhere (dangling, a loop) blocks the way, and so does
// path itself when it is a link but to a file its opening could make.
func BlockedPath(path string) error {
	if err := leadsNowhere(path, true); err != nil {
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
		if err := leadsNowhere(dir, false); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

// leadsNowhere says so when path is a link (a junction on Windows) that
// cannot be followed; nil when it is anything else, or nothing (a file or
// directory made since is no link). A link to a file not made yet, in a
// directory that is there, leads somewhere when it is a file's (file): a
// writer's open makes the file through it.
func leadsNowhere(path string, file bool) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode().IsDir() || fi.Mode().IsRegular() {
		return nil
	}
	_, err = os.Stat(path)
	if err == nil {
		return nil
	}
	if target, rerr := os.Readlink(path); file && rerr == nil && errors.Is(err, fs.ErrNotExist) {
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		if dir, derr := os.Stat(filepath.Dir(target)); derr == nil && dir.IsDir() {
			return nil
		}
	}
	return fmt.Errorf("%s is a link that leads nowhere (%v)", path, err)
}
