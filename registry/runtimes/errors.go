package runtimes

import "errors"

var (
	// ErrNoRegistryPath is returned by [Path] when no flag, no environment
	// variable and no home directory say where the runtime registry is.
	ErrNoRegistryPath = errors.New("runtimes: no runtime registry path")

	// ErrRegistryUnusable is returned when the runtime registry's path holds
	// something that is not a database file (a directory, say).
	ErrRegistryUnusable = errors.New("runtimes: runtime registry unusable")
)
