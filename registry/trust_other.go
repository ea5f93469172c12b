//go:build !unix && !windows

package registry

import "os"

// Trusted says why the lease at leasePath must not be used, or nil. This
// system has no lease at all (leasefs_other.go), so there is nothing to
// trust.
func Trusted(leasePath string) error { return nil }

// makeLeaseDir creates the lease directory dir.
func makeLeaseDir(dir string) error { return os.MkdirAll(dir, 0o700) }
