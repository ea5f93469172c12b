package proc

import "errors"

var (
	// ErrProcessEnded is returned by [ProcessStart] for a process that has
	// exited but not yet been reaped (a zombie): it answers signal 0, yet
	// it serves nothing any more.
	ErrProcessEnded = errors.New("proc: process ended")

	// ErrListingUnavailable is returned by [ObserveListening] when the
	// kernel's socket tables cannot be read, so no process can be observed.
	ErrListingUnavailable = errors.New("proc: process listing unavailable")
)
