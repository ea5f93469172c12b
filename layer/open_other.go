//go:build !unix && !windows

package layer

import "os"

// openToRead opens path to read it: no file here blocks its open.
func openToRead(path string) (*os.File, error) { return os.Open(path) }
