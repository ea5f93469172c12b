//go:build !linux

package main

// dropStartPages does nothing here: pages_linux.go says why Linux does it.
func dropStartPages() {}
