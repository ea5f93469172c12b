//go:build !unix

package registry

// Trusted says why the lease at leasePath must not be used, or nil. On
// this system the ownership of the lease directory is not checked yet (on
// Windows that is a question of its security descriptor, SPEC §13): a
// reparse point is still never followed (leasefs_windows.go).
func Trusted(leasePath string) error { return nil }
