package proc

import (
	"errors"
	"syscall"
	"time"
)

// Liveness is what can be told about a lease's owner process.
type Liveness int

const (
	// OwnerUnknown: nothing can be told (no pid recorded, or the system
	// would not say). The owner is treated as possibly alive, never as gone.
	OwnerUnknown Liveness = iota
	// OwnerAlive: the pid exists, started at the recorded time, in this boot.
	OwnerAlive
	// OwnerGone: no such pid, or a pid with another start time (recycled),
	// or the lease was written during another boot.
	OwnerGone
)

func (l Liveness) String() string {
	if l < OwnerUnknown || l > OwnerGone {
		l = OwnerUnknown
	}
	return [...]string{"unknown", "alive", "gone"}[l]
}

// Env is the part of the host the registry observes. A nil field uses the
// real implementation of this operating system, so the zero Env is the real
// host; tests and the pure judge's callers replace single fields.
type Env struct {
	// Signal0 asks whether a process has pid without touching it (kill(2)
	// with signal 0 on Unix, OpenProcess on Windows): nil or an error
	// matching syscall.EPERM mean it exists, syscall.ESRCH that none does;
	// any other error tells nothing.
	Signal0 func(pid int) error
	// ProcessStart returns the start token of pid ([ProcessStart]).
	ProcessStart func(pid int) (uint64, error)
	// BootID returns this boot's id.
	BootID func() (string, error)
	// Now returns the local time; used for ages and the busy timer.
	Now func() time.Time
}

func (e Env) signal0(pid int) error {
	if e.Signal0 != nil {
		return e.Signal0(pid)
	}
	return signal0(pid)
}

func (e Env) processStart(pid int) (uint64, error) {
	if e.ProcessStart != nil {
		return e.ProcessStart(pid)
	}
	return ProcessStart(pid)
}

func (e Env) bootID() (string, error) {
	if e.BootID != nil {
		return e.BootID()
	}
	return BootID()
}

// Time is the local time now: Now's, or the system clock's.
func (e Env) Time() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Ending reports whether the owner recorded as (pid, start) has begun to
// exit: it will never run its code again, so its server answers nothing,
// though its listener may take connections until the system closes it.
// That can come tens of milliseconds after its other sockets closed: on
// current Linux kernels a process killed -9 releases its descriptors from
// the highest down, and each inotify instance on the way waits out a
// grace period of the kernel's. A zero start makes no claim.
func (e Env) Ending(pid int, start uint64) bool {
	return pid > 0 && start != 0 && e.Presence(pid).Ended == start
}

// OfAnotherBoot reports whether bootID, a process's as it recorded it,
// is another boot's than this one: nothing of it runs. False when either
// is unknown.
func (e Env) OfAnotherBoot(bootID string) bool {
	if bootID == "" {
		return false
	}
	ours, err := e.bootID()
	return err == nil && !SameBoot(ours, bootID)
}

// Alive tells whether the owner recorded as (pid, start, bootID) still runs.
// It is alive only if kill(pid, 0) succeeds or fails with EPERM, its start
// time equals start and bootID is this boot. Another boot or another start
// time mean gone. A zero start or an empty bootID make no claim (that check
// is skipped); pid ≤ 0 is unknown.
func (e Env) Alive(pid int, start uint64, bootID string) Liveness {
	if pid <= 0 {
		return OwnerUnknown
	}
	if e.OfAnotherBoot(bootID) {
		return OwnerGone
	}
	p := e.Presence(pid)
	switch {
	case p.Known && !p.Exists:
		// No such pid, or a zombie, which answers signal 0: a leaseholder
		// killed -9 whose parent has not reaped it yet must not pass for
		// alive, nor one still exiting, whose sockets are already closed.
		return OwnerGone
	case !p.Exists:
		return OwnerUnknown // signal 0 told nothing
	case start == 0:
		return OwnerAlive
	case !p.Known && errors.Is(e.signal0(pid), syscall.ESRCH):
		return OwnerGone // it exited, and was reaped, in between
	case !p.Known:
		// It answered signal 0 but the system will not say when it started
		// (hidepid, another user's process): no claim either way.
		return OwnerUnknown
	case p.Start != start:
		return OwnerGone
	default:
		return OwnerAlive
	}
}
