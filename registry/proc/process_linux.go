package proc

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// On Linux a process's start is field 22 of /proc/<pid>/stat, in clock
// ticks since boot; the boot is /proc/sys/kernel/random/boot_id.

// ProcessStart returns the start time of pid: field 22 of /proc/<pid>/stat,
// in clock ticks since boot.
func ProcessStart(pid int) (uint64, error) {
	b, err := readProc("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading process start: %w", err)
	}
	return parseStat(b)
}

// BootID returns /proc/sys/kernel/random/boot_id, read once: a process
// lives in one boot.
func BootID() (string, error) { return bootID() }

var bootID = sync.OnceValues(func() (string, error) {
	b, err := readProc("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("reading boot id: %w", err)
	}
	id := string(bytes.TrimSpace(b))
	if id == "" {
		return "", errors.New("reading boot id: empty")
	}
	return id, nil
})

// BootTicks returns the boot clock now, in the unit of a process's start
// time (clock ticks since boot). A registration records it, so that "this
// process started before it registered" compares two readings of one
// kernel clock: CLOCK_BOOTTIME, which stamps start times. /proc/uptime
// says the same, except in a container whose LXCFS rewrites it to the
// container's age: every server would then seem to have started after it
// registered, a recycled pid.
func BootTicks() (uint64, error) {
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &now); err != nil {
		return 0, fmt.Errorf("reading the boot clock: %w", err)
	}
	return uint64(now.Nano()) / (1e9 / ticksPerSecond), nil // rounded down, as start times are
}

// maxPID is the largest pid a process can have (a pid_t): a larger one
// would be cut to another by the system call.
const maxPID = math.MaxInt32

// signal0 sends signal 0 to pid: nothing is delivered, kill(2) only checks.
func signal0(pid int) error { return syscall.Kill(pid, 0) }

// readProc reads the small file path of /proc whole, with plain system
// calls: an *os.File first offers its descriptor to Go's poller, which a
// /proc file refuses, at five more calls for each read (B1).
func readProc(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 1024)
	for {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
