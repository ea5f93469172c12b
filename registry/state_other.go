//go:build !unix && !windows

package registry

import (
	"io/fs"
	"os"
)

// On other systems no lease is ever held (leasefs_other.go), so no state
// is ever written.

func openAppend(path string) (*os.File, error)     { return nil, errNoLease }
func notMine(*os.File, fs.FileInfo, string) string { return "" }
