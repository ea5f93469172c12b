package proc

// lsof's field output (-F), and the judgement of macOS candidates by it,
// parsed and judged without touching the system so that the tests run on
// every operating system; listening_darwin.go runs /usr/sbin/lsof and reads
// the sysctls.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// lsofFile is one file of a process in lsof's field output.
type lsofFile struct {
	FD   string // the 'f' field: "3", "cwd", "err" (lsof could not list the descriptors), ...
	Type string // the 't' field: "IPv4", "IPv6", "DIR", ...
	Name string // the 'n' field
}

// parseLsofFields parses lsof -F output: one field a line, its first byte
// the field's identifier. A 'p' line starts a process, an 'f' line one of
// its files; 't' and 'n' lines describe the current file. Every process
// listed is a key, even one without files. Other identifiers (lsof adds
// fields of its own, and may add more) and empty lines are ignored; a 'p'
// line that is no pid, or a file before any process, is an error, since
// nothing after it could be attributed.
func parseLsofFields(out []byte) (map[int][]lsofFile, error) {
	procs := map[int][]lsofFile{}
	pid, open := 0, false
	for line := range strings.SplitSeq(string(out), "\n") {
		if line == "" {
			continue
		}
		id, value := line[0], line[1:]
		switch id {
		case 'p':
			n, err := strconv.Atoi(value)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("lsof output: bad process line %q", line)
			}
			pid, open = n, false
			if _, ok := procs[pid]; !ok {
				procs[pid] = nil
			}
		case 'f', 't', 'n':
			if pid == 0 {
				return nil, fmt.Errorf("lsof output: %q before any process", line)
			}
			files := procs[pid]
			if id == 'f' || !open {
				files, open = append(files, lsofFile{}), true
			}
			f := &files[len(files)-1]
			switch id {
			case 'f':
				f.FD = value
			case 't':
				f.Type = value
			case 'n':
				f.Name = value
			}
			procs[pid] = files
		}
	}
	return procs, nil
}

// lsofListenAddr turns the name lsof gives a listening TCP socket into the
// "ip:port" form of net.JoinHostPort, as the Linux observer reports it:
// "127.0.0.1:8741" and "[::1]:8741" stay; an IPv4-mapped IPv6 address is
// written as IPv4. lsof writes the wildcard address of both families as
// "*"; typ (the 't' field) tells them apart: "*:8741" is "[::]:8741" for an
// IPv6 socket (which Go's ":8741" listener is, dual-stack) and
// "0.0.0.0:8741" otherwise, also when typ is missing.
func lsofListenAddr(name, typ string) (string, error) {
	local, _, _ := strings.Cut(name, "->")
	local, _, _ = strings.Cut(local, " (") // " (LISTEN)" outside -F mode
	host, port, err := net.SplitHostPort(local)
	if err != nil {
		return "", fmt.Errorf("lsof socket name %q: %v", name, err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("lsof socket name %q: bad port", name)
	}
	if host == "*" {
		host = "0.0.0.0"
		if typ == "IPv6" {
			host = "::"
		}
	} else {
		addr, zone, zoned := strings.Cut(host, "%")
		ip := net.ParseIP(addr)
		if ip == nil {
			return "", fmt.Errorf("lsof socket name %q: bad address", name)
		}
		host = ip.String()
		if zoned {
			host += "%" + zone
		}
	}
	return net.JoinHostPort(host, strconv.FormatUint(p, 10)), nil
}

// lsofListeners returns the addresses of a process's files in the run that
// selected listening TCP sockets, sorted and deduplicated. A name that is no
// address is an error: the process listens somewhere that cannot be told.
func lsofListeners(files []lsofFile) ([]string, error) {
	var listen []string
	for _, f := range files {
		addr, err := lsofListenAddr(f.Name, f.Type)
		if err != nil {
			return nil, err
		}
		listen = append(listen, addr)
	}
	slices.Sort(listen)
	return slices.Compact(listen), nil
}

// lsofProbe reads a process's files in the run that selected its "cwd" and
// "err" files: its working directory ("" when lsof gave an error message
// instead of a path), and whether lsof could not list its descriptors.
func lsofProbe(files []lsofFile) (cwd string, fdsUnreadable bool) {
	for _, f := range files {
		switch f.FD {
		case "cwd":
			if strings.HasPrefix(f.Name, "/") {
				cwd = f.Name
			}
		case "err":
			fdsUnreadable = true
		}
	}
	return cwd, fdsUnreadable
}

// darwinCandidate is a process of the observing user that runs a
// majordomus-mcp executable, as kern.proc.all and kern.procargs2 describe it.
type darwinCandidate struct {
	PID, PPID int
	Start     uint64
	// Executable is the path execve was given (relative when it was
	// started by one); "" when kern.procargs2 was denied and only p_comm
	// named the process.
	Executable string
	// Args is nil when kern.procargs2 was denied or truncated.
	Args    []string
	Stopped bool // p_stat SSTOP
}

// assembleDarwinListening judges candidates by two lsof runs restricted to
// their pids: listen, the output of the run selecting listening TCP sockets
// (-F pftn), and probe, that of the run selecting the "cwd" and "err" files
// (-F pfn). stillRuns reports whether pid is still the process that started
// at start: false when it has exited or its pid was reused since.
//
// lsof lists a process only when it could look at it and found a selected
// file, and skips silently one it may not look at. So a candidate is
//   - skipped when it no longer runs (its records, if any, may be of
//     another process);
//   - Uninspectable when lsof could not list its descriptors (an "err"
//     file), when neither run lists it (every process has a working
//     directory: lsof could not look at it), when a socket name is no
//     address, or when whether it still runs cannot be told;
//   - not listening when only the probe lists it;
//   - a ListeningProcess otherwise.
func assembleDarwinListening(cands []darwinCandidate, listen, probe []byte, stillRuns func(pid int, start uint64) (bool, error)) (Listening, error) {
	sockets, err := parseLsofFields(listen)
	if err != nil {
		return Listening{}, fmt.Errorf("%w: %v", ErrListingUnavailable, err)
	}
	probed, err := parseLsofFields(probe)
	if err != nil {
		return Listening{}, fmt.Errorf("%w: %v", ErrListingUnavailable, err)
	}
	var out Listening
	for _, c := range cands {
		files, listed := sockets[c.PID]
		probeFiles, seen := probed[c.PID]
		cwd, fdsUnreadable := lsofProbe(probeFiles)
		runs, err := stillRuns(c.PID, c.Start)
		switch {
		case err != nil:
			out.Uninspectable = append(out.Uninspectable, c.PID)
			continue
		case !runs:
			continue
		case fdsUnreadable, !listed && !seen:
			out.Uninspectable = append(out.Uninspectable, c.PID)
			continue
		case !listed:
			continue
		}
		addrs, err := lsofListeners(files)
		if err != nil || len(addrs) == 0 {
			out.Uninspectable = append(out.Uninspectable, c.PID)
			continue
		}
		out.Processes = append(out.Processes, ListeningProcess{
			PID: c.PID, PPID: c.PPID, Start: c.Start, Executable: c.Executable,
			Listen: addrs, Args: c.Args, Cwd: cwd, Stopped: c.Stopped,
		})
	}
	slices.SortFunc(out.Processes, func(a, b ListeningProcess) int { return a.PID - b.PID })
	slices.Sort(out.Uninspectable)
	return out, nil
}

// runLsof runs the lsof at path with args, killed after timeout, and
// returns its standard output. lsof exits 1, silently, when an item it was
// asked for was not found (a pid that exited meanwhile, no listening socket
// at all): that is an answer, so exit 1 with nothing on standard error is
// taken for one, whatever the output. Everything else (lsof missing or not
// executable, killed at the timeout, another status, exit 1 with a
// message) fails with [ErrListingUnavailable] and the reason.
func runLsof(path string, timeout time.Duration, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A child holding the pipes open must not keep Wait past the kill.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), nil
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound):
		return nil, fmt.Errorf("%w: lsof not found at %s: listening sockets cannot be observed on darwin", ErrListingUnavailable, path)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s did not finish within %s", ErrListingUnavailable, path, timeout)
	case errors.As(err, &exit) && exit.ExitCode() == 1 && len(bytes.TrimSpace(stderr.Bytes())) == 0:
		return stdout.Bytes(), nil
	case errors.As(err, &exit):
		return nil, fmt.Errorf("%w: %s %s: %v%s", ErrListingUnavailable, path, strings.Join(args, " "), err, lsofStderr(stderr.Bytes()))
	default:
		return nil, fmt.Errorf("%w: running %s: %v", ErrListingUnavailable, path, err)
	}
}

// lsofStderr is the first line of lsof's complaint, shortened, for an
// error message.
func lsofStderr(b []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte("\n"))
	if len(line) == 0 {
		return ""
	}
	const limit = 200
	if len(line) > limit {
		line = append(line[:limit:limit], "..."...)
	}
	return ": " + string(line)
}
