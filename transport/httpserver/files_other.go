//go:build !unix

package httpserver

import "math"

// openFilesLimit is how many files the process may hold open: no limit
// below what its handles are bounded by.
func openFilesLimit() int { return math.MaxInt }
