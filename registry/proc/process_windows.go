package proc

import (
	"errors"
	"fmt"
	"math"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// On Windows a process's start is its creation time (GetProcessTimes), a
// FILETIME: 100-nanosecond intervals since 1601, absolute, so a recycled
// pid (Windows recycles them quickly) never matches. The boot is the
// kernel's own boot time.

// ProcessStart returns pid's creation time. A process that has exited but
// whose handle another process still holds gives [ErrProcessEnded], as a
// zombie does on Unix.
func ProcessStart(pid int) (uint64, error) {
	h, err := openProcess(pid, windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return 0, fmt.Errorf("reading process start: %w", err)
	}
	defer windows.CloseHandle(h)
	return startOfHandle(h)
}

// startOfHandle returns the creation time of the process behind h, opened
// with SYNCHRONIZE and PROCESS_QUERY_LIMITED_INFORMATION.
func startOfHandle(h windows.Handle) (uint64, error) {
	// WAIT_TIMEOUT is "still running"; the exit code STILL_ACTIVE (259)
	// is not, since a process may exit with 259.
	if ev, err := windows.WaitForSingleObject(h, 0); err == nil && ev == windows.WAIT_OBJECT_0 {
		return 0, ErrProcessEnded
	}
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &creation, &exit, &kernel, &user); err != nil {
		return 0, fmt.Errorf("reading process times: %w", err)
	}
	return filetimeTicks(creation.HighDateTime, creation.LowDateTime), nil
}

// openProcess opens pid; its errors follow the Signal0 contract (ESRCH for
// no such pid, EPERM for a process this user may not open).
func openProcess(pid int, access uint32) (windows.Handle, error) {
	if pid <= 0 || uint64(pid) > math.MaxUint32 {
		return 0, syscall.ESRCH
	}
	h, err := windows.OpenProcess(access, false, uint32(pid))
	if err != nil {
		if code, ok := errors.AsType[syscall.Errno](err); ok {
			return 0, openProcessMeaning(uintptr(code), err)
		}
		return 0, err
	}
	return h, nil
}

// BootID returns the boot time, now minus the time since boot, in whole
// seconds ([bootTimeID]), which [SameBoot] takes for no evidence: it moves
// with the clock. (The kernel's own boot time, from
// NtQuerySystemInformation, would be exact, but wine reports its server's
// start there, so that tests under wine could not rely on it.)
func BootID() (string, error) {
	up := windows.DurationSinceBoot()
	if up <= 0 {
		return "", errors.New("reading boot time: no time since boot")
	}
	return bootTimeID(time.Now().Add(-up)), nil
}

// BootTicks returns the clock start times are read in (a FILETIME) now.
func BootTicks() (uint64, error) {
	ft := windows.NsecToFiletime(time.Now().UnixNano())
	return filetimeTicks(ft.HighDateTime, ft.LowDateTime), nil
}

// maxPID is the largest pid a process can have (a DWORD): a larger one
// would be cut to another by the system call.
const maxPID = math.MaxUint32

// signal0 tells whether a process has pid by opening it for nothing but
// a query.
func signal0(pid int) error {
	h, err := openProcess(pid, windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return err
	}
	windows.CloseHandle(h)
	return nil
}
