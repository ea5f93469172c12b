//go:build !linux

package node

// dropStartPages does nothing here: pages_linux.go says why Linux does it.
func dropStartPages() {}
