//go:build unix

package registry

import "os"

// privateMode reports whether a file's mode is the private one it was
// created with.
func privateMode(got, want os.FileMode) bool { return got == want }
