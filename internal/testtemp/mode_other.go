//go:build !unix

package testtemp

import "os"

// PrivateMode accepts any mode: Windows has no mode bits (access is its
// ACL's, inherited from the directory), and Go reports 0666 for every
// writable file.
func PrivateMode(got, want os.FileMode) bool { return true }
