package registry

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ListeningProcess is a process observed through /proc: a majordomus-mcp
// executable of the observing user that holds a listening TCP socket. It is
// the evidence that a server exists, which no registry row can give.
type ListeningProcess struct {
	PID  int
	PPID int
	// Start is field 22 of /proc/<pid>/stat (clock ticks since boot).
	Start uint64
	// Executable is the target of /proc/<pid>/exe (" (deleted)" kept when
	// the file was replaced since the process started).
	Executable string
	// Listen holds its listening addresses ("127.0.0.1:8741"), sorted.
	Listen []string
	// Args is its command line; Cwd its working directory. Together they
	// say which checkout it was started for.
	Args []string
	Cwd  string
}

// Listening is one observation of the host's majordomus-mcp servers.
type Listening struct {
	// Processes are sorted by pid.
	Processes []ListeningProcess
	// Uninspectable are the pids of processes that run a majordomus-mcp
	// executable but whose sockets could not be read: whether they serve
	// cannot be told.
	Uninspectable []int
}

// ProcScan observes processes through a /proc file system, reading only:
// it sends no signal and starts no command.
type ProcScan struct {
	// Root is the /proc mount; "" is /proc. Tests point it at a fake tree.
	Root string
	// Names are the executable base names that are majordomus-mcp.
	Names []string
}

func (p ProcScan) path(parts ...string) string {
	root := p.Root
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(append([]string{root}, parts...)...)
}

// Listening returns the processes owned by uid that run one of p.Names and
// hold a listening TCP socket (IPv4 or IPv6). Sockets are matched by inode:
// /proc/net/tcp{,6} list the listening ones, /proc/<pid>/fd links name the
// sockets a process holds. It fails ([ErrListingUnavailable]) only when the
// socket table cannot be read; a process that exits meanwhile is skipped.
// The socket tables are those of the observer's network namespace.
func (p ProcScan) Listening(uid int) (Listening, error) {
	sockets, err := p.listeningSockets()
	if err != nil {
		return Listening{}, err
	}
	entries, err := os.ReadDir(p.path())
	if err != nil {
		return Listening{}, fmt.Errorf("%w: %v", ErrListingUnavailable, err)
	}
	var out Listening
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		proc, ok, err := p.inspect(pid, uid, sockets)
		switch {
		case err != nil:
			out.Uninspectable = append(out.Uninspectable, pid)
		case ok:
			out.Processes = append(out.Processes, proc)
		}
	}
	return out, nil
}

// inspect reads one pid: ok when it is a listening majordomus-mcp of uid;
// an error when it runs a majordomus-mcp executable but its sockets cannot
// be read. Anything else (another user, another program, gone) is skipped.
func (p ProcScan) inspect(pid, uid int, sockets map[string]string) (ListeningProcess, bool, error) {
	dir := strconv.Itoa(pid)
	fi, err := os.Stat(p.path(dir))
	if err != nil {
		return ListeningProcess{}, false, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
		return ListeningProcess{}, false, nil
	}
	exe, err := os.Readlink(p.path(dir, "exe"))
	if err != nil || !slices.Contains(p.Names, filepath.Base(strings.TrimSuffix(exe, " (deleted)"))) {
		return ListeningProcess{}, false, nil
	}
	fds, err := os.ReadDir(p.path(dir, "fd"))
	if errors.Is(err, fs.ErrNotExist) {
		return ListeningProcess{}, false, nil
	}
	if err != nil {
		return ListeningProcess{}, false, err
	}
	var listen []string
	for _, fd := range fds {
		target, err := os.Readlink(p.path(dir, "fd", fd.Name()))
		if err != nil {
			continue
		}
		inode, ok := strings.CutPrefix(target, "socket:[")
		if !ok {
			continue
		}
		if addr, ok := sockets[strings.TrimSuffix(inode, "]")]; ok && !slices.Contains(listen, addr) {
			listen = append(listen, addr)
		}
	}
	if len(listen) == 0 {
		return ListeningProcess{}, false, nil
	}
	slices.Sort(listen)
	stat, err := os.ReadFile(p.path(dir, "stat"))
	if err != nil {
		return ListeningProcess{}, false, nil
	}
	ppid, start, err := parsePPIDAndStart(stat)
	if err != nil {
		return ListeningProcess{}, false, err
	}
	proc := ListeningProcess{PID: pid, PPID: ppid, Start: start, Executable: exe, Listen: listen}
	if raw, err := os.ReadFile(p.path(dir, "cmdline")); err == nil {
		proc.Args = strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	}
	proc.Cwd, _ = os.Readlink(p.path(dir, "cwd"))
	return proc, true, nil
}

// parsePPIDAndStart extracts fields 4 (ppid) and 22 (starttime) of a
// /proc/<pid>/stat line, counting from the last ')' as parseStat does.
func parsePPIDAndStart(b []byte) (int, uint64, error) {
	start, err := parseStat(b)
	if err != nil {
		return 0, 0, err
	}
	fields := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	ppid, err := strconv.Atoi(string(fields[1])) // fields[0] is field 3
	if err != nil {
		return 0, 0, fmt.Errorf("parsing /proc stat ppid: %w", err)
	}
	return ppid, start, nil
}

// listeningSockets maps the inode of every listening TCP socket to its
// address. /proc/net/tcp must be readable; tcp6 is absent without IPv6.
func (p ProcScan) listeningSockets() (map[string]string, error) {
	sockets := map[string]string{}
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(p.path("net", name))
		if name == "tcp6" && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrListingUnavailable, err)
		}
		err = parseSocketTable(f, sockets)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrListingUnavailable, name, err)
		}
	}
	return sockets, nil
}

// tcpListen is the state of a listening socket in /proc/net/tcp.
const tcpListen = "0A"

// parseSocketTable reads /proc/net/tcp or tcp6: a header line, then one
// line per socket whose fields 1, 3 and 9 are the local address
// (hex IP:hex port), the state and the inode.
func parseSocketTable(r io.Reader, into map[string]string) error {
	sc := bufio.NewScanner(r)
	sc.Scan() // the header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, err := parseHexAddr(f[1])
		if err != nil {
			return err
		}
		into[f[9]] = addr
	}
	return sc.Err()
}

// parseHexAddr turns "0100007F:20F5" into "127.0.0.1:8437". The kernel
// prints the address as 32-bit words in host byte order (little-endian on
// every architecture this runs on) and the port big-endian.
func parseHexAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad socket address %q", s)
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", fmt.Errorf("bad socket address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", fmt.Errorf("bad socket port %q", s)
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.FormatUint(port, 10)), nil
}
