package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// On Linux a process's start is field 22 of /proc/<pid>/stat, in clock
// ticks since boot; the boot is /proc/sys/kernel/random/boot_id.

// ProcessStart returns the start time of pid: field 22 of /proc/<pid>/stat,
// in clock ticks since boot.
func ProcessStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading process start: %w", err)
	}
	return parseStat(b)
}

// BootID returns /proc/sys/kernel/random/boot_id.
func BootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("reading boot id: %w", err)
	}
	id := string(bytes.TrimSpace(b))
	if id == "" {
		return "", errors.New("reading boot id: empty")
	}
	return id, nil
}

// BootTicks returns the boot clock now, in the unit of a process's start
// time (clock ticks since boot), from /proc/uptime. A registration records
// it, so that "this process started before it registered" compares two
// readings of one kernel clock.
func BootTicks() (uint64, error) {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0, fmt.Errorf("reading the boot clock: %w", err)
	}
	return parseUptime(b)
}

// signal0 sends signal 0 to pid: nothing is delivered, kill(2) only checks.
func signal0(pid int) error { return syscall.Kill(pid, 0) }
