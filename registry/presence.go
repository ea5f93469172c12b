package registry

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// ticksPerSecond is USER_HZ, the unit of /proc's clock ticks. It is 100 on
// every Linux architecture Go supports, and /proc reports in it whatever
// the kernel's own HZ is.
const ticksPerSecond = 100

// Presence is what signal 0 and /proc say about a pid now: whether a
// process has it, and since when. Unlike [Env.Alive] it judges nothing
// against a recorded identity, so that the caller can tell "no such pid"
// from "a recycled pid".
type Presence struct {
	// Known is false when nothing could be told (signal 0 failed with
	// another error than ESRCH or EPERM, or /proc would not give the start
	// time of a pid that exists).
	Known bool
	// Exists: some process has the pid.
	Exists bool
	// Start is that process's start time (clock ticks since boot).
	Start uint64
}

// Presence tells whether pid exists, with signal 0 (nothing is delivered),
// and when the process that has it started.
func (e Env) Presence(pid int) Presence {
	if pid <= 0 {
		return Presence{}
	}
	switch err := e.signal0(pid); {
	case err == nil, errors.Is(err, syscall.EPERM):
	case errors.Is(err, syscall.ESRCH):
		return Presence{Known: true}
	default:
		return Presence{}
	}
	start, err := e.processStart(pid)
	if err != nil {
		return Presence{Exists: true}
	}
	return Presence{Known: true, Exists: true, Start: start}
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

// parseUptime reads the first field of /proc/uptime ("12345.67 …"), in
// seconds with two decimals, as clock ticks, rounding down like the
// kernel's start times.
func parseUptime(b []byte) (uint64, error) {
	fields := bytes.Fields(b)
	if len(fields) == 0 {
		return 0, errors.New("parsing /proc/uptime: empty")
	}
	whole, frac, _ := bytes.Cut(fields[0], []byte("."))
	secs, err := strconv.ParseUint(string(whole), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing /proc/uptime: %w", err)
	}
	ticks := secs * ticksPerSecond
	if len(frac) > 0 {
		digits := string(frac)
		for len(digits) < 2 {
			digits += "0"
		}
		hundredths, err := strconv.ParseUint(digits[:2], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parsing /proc/uptime: %w", err)
		}
		ticks += hundredths * ticksPerSecond / 100
	}
	return ticks, nil
}
