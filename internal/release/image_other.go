//go:build !linux

package release

import "os"

// runningImage names the code this process runs: the file it was started
// from, by the name it has now.
func runningImage() (string, error) { return os.Executable() }
