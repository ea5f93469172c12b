//go:build unix

package httpserver

import (
	"math"

	"golang.org/x/sys/unix"
)

// openFilesLimit is how many files the process may hold open: its soft
// limit, which the Go runtime raised to the hard one as it started.
func openFilesLimit() int {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil || uint64(l.Cur) > math.MaxInt {
		return math.MaxInt
	}
	return int(l.Cur)
}
