package proc

// What Windows's process calls say, judged without touching the system so
// that the logic's tests run on every operating system
// (process_windows.go and listening_windows.go call Windows).

import (
	"fmt"
	"syscall"
)

// Windows error codes that say something about a pid.
const (
	winErrorAccessDenied     = 5  // ERROR_ACCESS_DENIED: it exists, not ours to open
	winErrorInvalidParameter = 87 // ERROR_INVALID_PARAMETER: no process has the pid
)

// openProcessMeaning maps the code OpenProcess failed with to the Signal0
// contract: no such pid is ESRCH, a process this user may not open is
// EPERM; anything else tells nothing and stays as it is.
func openProcessMeaning(code uintptr, err error) error {
	switch code {
	case winErrorInvalidParameter:
		return fmt.Errorf("%w: %v", syscall.ESRCH, err)
	case winErrorAccessDenied:
		return fmt.Errorf("%w: %v", syscall.EPERM, err)
	}
	return err
}

// filetimeTicks joins a FILETIME's halves: 100-nanosecond intervals since
// 1601-01-01 UTC.
func filetimeTicks(high, low uint32) uint64 { return uint64(high)<<32 | uint64(low) }

// parentReplaced reports whether the process now holding the parent's pid
// started after this one (both FILETIMEs): then it is not the parent, which
// is gone, its pid given to another.
func parentReplaced(parentStart, selfStart uint64) bool { return parentStart > selfStart }
