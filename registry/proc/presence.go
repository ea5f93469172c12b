package proc

import (
	"errors"
	"syscall"
)

// Presence is what the system says about a pid now: whether a
// process has it, and since when. Unlike [Env.Alive] it judges nothing
// against a recorded identity, so that the caller can tell "no such pid"
// from "a recycled pid".
type Presence struct {
	// Known is false when nothing could be told (signal 0 failed with
	// another error than ESRCH or EPERM, or the system would not give the
	// start time of a pid that exists). A process that ended but is not
	// yet reaped is known not to exist.
	Known bool
	// Exists: some process has the pid.
	Exists bool
	// Start is that process's start token ([ProcessStart]).
	Start uint64
	// Ended is the start token of a process that has the pid but has
	// begun to exit, where the system tells it; 0 otherwise.
	Ended uint64
}

// Presence tells whether pid exists, with signal 0 (nothing is delivered),
// and when the process that has it started.
func (e Env) Presence(pid int) Presence {
	if pid <= 0 {
		return Presence{}
	}
	if int64(pid) > maxPID {
		// No process has it; the system call would cut it to another pid
		// (2^32+1 to 1, 2^32-1 to -1: every process) and answer for that.
		return Presence{Known: true}
	}
	switch err := e.signal0(pid); {
	case err == nil, errors.Is(err, syscall.EPERM):
	case errors.Is(err, syscall.ESRCH):
		return Presence{Known: true}
	default:
		return Presence{}
	}
	start, err := e.processStart(pid)
	switch {
	case errors.Is(err, ErrProcessEnded):
		return Presence{Known: true, Ended: start} // a zombie runs nothing: it waits to be reaped
	case err != nil:
		return Presence{Exists: true}
	}
	return Presence{Known: true, Exists: true, Start: start}
}
