package layer

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
)

// manifestRel is the manifest's path relative to a checkout root.
const manifestRel = ".ai/manifest.yaml"

// FindCheckout returns the checkout root for start: the nearest ancestor of
// start (start itself included) that holds .ai/manifest.yaml as a regular
// file. The result is absolute and symlink-resolved ([filepath.EvalSymlinks]).
// An empty start means the working directory.
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
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(manifestRel)))
		if err == nil && fi.Mode().IsRegular() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%w from %s: no ancestor directory holds %s", ErrNoCheckout, abs, manifestRel)
		}
		dir = parent
	}
}
