//go:build !linux

package proc

// Namespaces returns "": only Linux has the pid and network namespaces
// that would put a process sharing this file system out of reach.
func Namespaces() string { return "" }

// PIDNamespace returns "": only Linux has pid namespaces.
func PIDNamespace() string { return "" }
