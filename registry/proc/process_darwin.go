package proc

import (
	"errors"
	"fmt"
	"math"
	"time"

	"golang.org/x/sys/unix"
)

// On macOS a process's start is kinfo_proc's p_starttime (sysctl
// kern.proc.pid), as microseconds since the Unix epoch; the boot is
// kern.bootsessionuuid, a fresh UUID every boot.

// ProcessStart returns when pid started, in microseconds since the Unix
// epoch. A process that is exiting or a zombie gives [ErrProcessEnded]; a
// pid no process has gives EIO (sysctl answers nothing for it).
func ProcessStart(pid int) (uint64, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, fmt.Errorf("reading process start: %w", err)
	}
	return startOf(k)
}

// startOf is kinfoStart of what sysctl said of a process.
func startOf(k *unix.KinfoProc) (uint64, error) {
	return kinfoStart(k.Proc.P_stat, k.Proc.P_flag, k.Proc.P_starttime.Sec, int64(k.Proc.P_starttime.Usec))
}

// BootID returns kern.bootsessionuuid.
func BootID() (string, error) {
	id, err := unix.Sysctl("kern.bootsessionuuid")
	if err != nil {
		return "", fmt.Errorf("reading boot id: %w", err)
	}
	if id == "" {
		return "", errors.New("reading boot id: empty")
	}
	return id, nil
}

// BootTicks returns the clock start times are read in (microseconds since
// the Unix epoch) now.
func BootTicks() (uint64, error) { return uint64(time.Now().UnixMicro()), nil }

// maxPID is the largest pid a process can have (a pid_t): a larger one
// would be cut to another by the system call.
const maxPID = math.MaxInt32

// signal0 sends signal 0 to pid: nothing is delivered, kill(2) only checks.
func signal0(pid int) error { return unix.Kill(pid, 0) }
