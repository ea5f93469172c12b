package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// darwinLsof is the lsof macOS ships in its base system; a variable so that
// tests can point it elsewhere.
var darwinLsof = "/usr/sbin/lsof"

// darwinLsofTimeout bounds each lsof run.
const darwinLsofTimeout = 10 * time.Second

// observeListening finds the candidates in the process table through sysctl:
// kern.proc.all gives every process's effective uid, state, parent and start
// ([ProcessStart]'s token); kern.procargs2 its executable path and command
// line (p_comm, the first 16 bytes of the executable's name, when that is
// denied). A candidate is a process of the effective uid, not a zombie, whose
// executable path's base name or p_comm is one of names.
//
// Unlike the Linux observer, which starts no command, it runs one: macOS
// offers no documented way to read another process's sockets from Go
// without cgo (libproc's proc_pidinfo is a library call, not a system call),
// so it runs the system's /usr/sbin/lsof, twice, restricted to the
// candidates' pids and only when there is a candidate at all: once for
// their listening TCP sockets, once for their working directories and for
// lsof's own report that a descriptor table could not be read. Both end
// after 10 s at most. It sends no signal.
//
// It fails with [ErrListingUnavailable] when the process table cannot be
// read, or when lsof is missing, fails or runs too long: without it no
// socket can be seen. How a candidate is judged by lsof's answer is told at
// assembleDarwinListening. The socket tables are those lsof sees, which on
// macOS are the host's.
func observeListening(names []string) (Listening, error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return Listening{}, fmt.Errorf("%w: sysctl kern.proc.all: %v", ErrListingUnavailable, err)
	}
	uid := os.Geteuid()
	var cands []darwinCandidate
	for i := range procs {
		if c, ok := darwinCandidateOf(&procs[i], uid, names); ok {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return Listening{}, nil
	}
	pids := make([]string, len(cands))
	for i, c := range cands {
		pids[i] = strconv.Itoa(c.PID)
	}
	list := strings.Join(pids, ",")
	// -n -P: numeric hosts and ports; -w: no warnings about file systems
	// lsof cannot stat (a failure still speaks through the exit status and
	// standard error); -a: the selections are ANDed, not ORed.
	listen, err := runLsof(darwinLsof, darwinLsofTimeout,
		"-n", "-P", "-w", "-a", "-p", list, "-iTCP", "-sTCP:LISTEN", "-F", "pftn")
	if err != nil {
		return Listening{}, err
	}
	probe, err := runLsof(darwinLsof, darwinLsofTimeout,
		"-n", "-P", "-w", "-a", "-p", list, "-d", "cwd,err", "-F", "pfn")
	if err != nil {
		return Listening{}, err
	}
	return assembleDarwinListening(cands, listen, probe, darwinStillRuns)
}

// darwinCandidateOf says whether k is a live process of uid that runs an
// executable named one of names, and describes it.
func darwinCandidateOf(k *unix.KinfoProc, uid int, names []string) (darwinCandidate, bool) {
	pid := int(k.Proc.P_pid)
	if pid <= 0 || int(k.Eproc.Ucred.Uid) != uid {
		return darwinCandidate{}, false
	}
	start, err := startOf(k)
	if err != nil { // exiting, or a zombie
		return darwinCandidate{}, false
	}
	c := darwinCandidate{PID: pid, PPID: int(k.Eproc.Ppid), Start: start, Stopped: k.Proc.P_stat == darwinStopped}
	comm := unix.ByteSliceToString(k.Proc.P_comm[:])
	matches := slices.ContainsFunc(names, func(name string) bool { return darwinCommMatches(comm, name) })
	if raw, err := darwinProcArgs(pid); err == nil {
		exe, args, err := parseProcArgs2(raw)
		if exe != "" {
			c.Executable = exe
			if err == nil {
				c.Args = args
			}
			matches = matches || slices.Contains(names, filepath.Base(exe))
		}
	}
	return c, matches
}

// darwinProcArgs reads kern.procargs2 for pid. The kernel copies it out of
// the process's memory and answers EIO while the process is being set up
// or torn down, which a short wait may settle.
func darwinProcArgs(pid int) ([]byte, error) {
	raw, err := unix.SysctlRaw("kern.procargs2", pid)
	for try := 0; try < 3 && errors.Is(err, unix.EIO); try++ {
		time.Sleep(time.Millisecond)
		raw, err = unix.SysctlRaw("kern.procargs2", pid)
	}
	return raw, err
}

// darwinStillRuns reports whether pid is still the process that started at
// start: false when it has exited, is a zombie, or the pid was reused.
func darwinStillRuns(pid int, start uint64) (bool, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if errors.Is(err, unix.EIO) { // sysctl answers nothing for a pid no process has
		return false, nil
	}
	if err != nil {
		return false, err
	}
	now, err := startOf(k)
	if errors.Is(err, ErrProcessEnded) {
		return false, nil
	}
	return err == nil && now == start, err
}
