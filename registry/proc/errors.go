package proc

import "errors"

var (
	// ErrProcessEnded is returned by [ProcessStart] for a process that has
	// begun to exit or has exited but not yet been reaped (a zombie): it
	// answers signal 0, yet it serves nothing any more. Where the system
	// still tells when that process started, the start token comes with
	// the error ([Env.Ending]).
	ErrProcessEnded = errors.New("proc: process ended")

	// ErrListingUnavailable is returned by [ObserveListening] when the
	// kernel's socket tables cannot be read, so no process can be observed.
	ErrListingUnavailable = errors.New("proc: process listing unavailable")
)
