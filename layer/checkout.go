package layer

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// manifestRel is the manifest's path relative to a checkout root.
const manifestRel = ".ai/manifest.yaml"

// FindCheckout returns the checkout root for start: the nearest ancestor of
// start (start itself included) that holds .ai/manifest.yaml, anything but
// a directory there: one that cannot be read (a link that leads nowhere, a
// FIFO, a file in an .ai this user may not search or that is a loop of
// links) is that checkout's, for [LoadManifest] to refuse, not a reason to
// serve the checkout around it. The result is absolute and
// symlink-resolved ([filepath.EvalSymlinks]). An empty start means the
// working directory.
//
// When no ancestor qualifies, or start cannot be resolved, the error wraps
// [ErrNoCheckout] and names the start directory.
func FindCheckout(start string) (string, error) {
	start = cmp.Or(start, ".")
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", fmt.Errorf("%w from %s: cannot tell the working directory (removed?): %v", ErrNoCheckout, start, err)
	}
	dir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w from %s: resolving the start directory: %v", ErrNoCheckout, abs, err)
	}
	for {
		if holdsManifest(filepath.Join(dir, filepath.FromSlash(manifestRel))) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w from %s: no ancestor directory holds %s", ErrNoCheckout, abs, manifestRel)
		}
		dir = parent
	}
}

// holdsManifest reports whether there is a manifest at path, readable or
// not: anything but nothing, or a directory (or a link to one). Where the
// way to it cannot be followed (an .ai this user may not search, or a
// loop of links), something is there too.
func holdsManifest(path string) bool {
	if _, err := os.Lstat(path); err != nil {
		return errors.Is(err, fs.ErrPermission) || linkLoop(err)
	}
	fi, err := os.Stat(path)
	return err != nil || !fi.IsDir()
}
