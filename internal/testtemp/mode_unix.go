//go:build unix

package testtemp

import "os"

// PrivateMode reports whether a file's mode is the private one it was
// created with.
func PrivateMode(got, want os.FileMode) bool { return got == want }
