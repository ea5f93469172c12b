package registry

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Identity is what a process records about itself in its lease, and what
// another process checks to tell whether that owner still runs.
type Identity struct {
	PID int
	// Start is field 22 of /proc/<pid>/stat: clock ticks since boot.
	Start uint64
	// BootID is /proc/sys/kernel/random/boot_id.
	BootID     string
	Host       string
	Executable Executable
}

// Liveness is what can be told about a lease's owner process.
type Liveness int

const (
	// OwnerUnknown: nothing can be told (no pid recorded, or /proc would not
	// say). The owner is treated as possibly alive, never as gone.
	OwnerUnknown Liveness = iota
	// OwnerAlive: the pid exists, started at the recorded time, in this boot.
	OwnerAlive
	// OwnerGone: no such pid, or a pid with another start time (recycled),
	// or the lease was written during another boot.
	OwnerGone
)

func (l Liveness) String() string {
	switch l {
	case OwnerAlive:
		return "alive"
	case OwnerGone:
		return "gone"
	default:
		return "unknown"
	}
}

// Env is the part of the host the registry observes. A nil field uses the
// real Linux implementation, so the zero Env is the real host; tests and the
// pure judge's callers replace single fields.
type Env struct {
	// Signal0 sends signal 0 to pid (kill(2)): nil or EPERM mean it exists.
	Signal0 func(pid int) error
	// ProcessStart returns field 22 of /proc/<pid>/stat.
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
	return syscall.Kill(pid, 0)
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

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// Alive tells whether the process pid that started at start during boot
// bootID still runs, on the real host. See [Env.Alive].
func Alive(pid int, start uint64, bootID string) Liveness {
	return Env{}.Alive(pid, start, bootID)
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
	if bootID != "" {
		if ours, err := e.bootID(); err == nil && ours != bootID {
			return OwnerGone
		}
	}
	switch err := e.signal0(pid); {
	case err == nil, errors.Is(err, syscall.EPERM):
	case errors.Is(err, syscall.ESRCH):
		return OwnerGone
	default:
		return OwnerUnknown
	}
	got, err := e.processStart(pid)
	switch {
	case errors.Is(err, ErrProcessEnded):
		// A zombie answers signal 0: a leaseholder killed -9 whose parent
		// has not reaped it yet must not pass for alive.
		return OwnerGone
	case start == 0:
		return OwnerAlive
	case err != nil:
		// It answered signal 0 but /proc will not say (hidepid, or it
		// exited in between): no claim either way.
		return OwnerUnknown
	case got != start:
		return OwnerGone
	default:
		return OwnerAlive
	}
}

// ProcessStart returns the start time of pid: field 22 of /proc/<pid>/stat,
// in clock ticks since boot.
func ProcessStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("reading process start: %w", err)
	}
	return parseStat(b)
}

// parseStat extracts field 22 (starttime) of a /proc/<pid>/stat line. The
// second field is the command in parentheses and may itself hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (uint64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("parsing /proc stat: no command field")
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	const index = 22 - 3
	if len(fields) <= index {
		return 0, fmt.Errorf("parsing /proc stat: %d fields after the command", len(fields))
	}
	if state := string(fields[0]); state == "Z" || state == "X" {
		return 0, ErrProcessEnded
	}
	v, err := strconv.ParseUint(string(fields[index]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing /proc stat start time: %w", err)
	}
	return v, nil
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

// Self returns this process's identity. It fails when any part cannot be
// determined; the caller then cannot write a lease others could judge.
func Self() (Identity, error) {
	pid := os.Getpid()
	start, err := ProcessStart(pid)
	if err != nil {
		return Identity{}, err
	}
	boot, err := BootID()
	if err != nil {
		return Identity{}, err
	}
	host, err := os.Hostname()
	if err != nil {
		return Identity{}, fmt.Errorf("reading host name: %w", err)
	}
	exe, err := SelfExecutable()
	if err != nil {
		return Identity{}, err
	}
	return Identity{PID: pid, Start: start, BootID: boot, Host: host, Executable: exe}, nil
}

// SelfExecutable describes the file this process runs from: os.Executable
// with symbolic links resolved, and that file's mtime and size.
func SelfExecutable() (Executable, error) {
	p, err := os.Executable()
	if err != nil {
		return Executable{}, fmt.Errorf("locating executable: %w", err)
	}
	return StatExecutable(p)
}

// StatExecutable describes the executable at p (symbolic links resolved).
func StatExecutable(p string) (Executable, error) {
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Executable{}, fmt.Errorf("resolving executable: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return Executable{}, fmt.Errorf("reading executable: %w", err)
	}
	return Executable{Path: resolved, MTime: fi.ModTime().Unix(), Size: fi.Size()}, nil
}
