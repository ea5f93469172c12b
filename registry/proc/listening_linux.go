package proc

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

func observeListening(names []string) (Listening, error) {
	return ProcScan{Names: names}.Listening(os.Geteuid())
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
	return filepath.Join(append([]string{cmp.Or(p.Root, "/proc")}, parts...)...)
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

// named tells whether the process in dir, whose executable cannot be read
// (readErr), is one of p.Names by its command name, which the kernel cuts
// to 15 bytes. A process the kernel makes not dumpable (an executable its
// user may run but not read, file capabilities) hides its executable and
// its sockets even from its own user: it is then uninspectable, not
// another program. A process gone meanwhile is skipped.
func (p ProcScan) named(dir string, readErr error) bool {
	if errors.Is(readErr, fs.ErrNotExist) {
		return false
	}
	comm, err := readProc(p.path(dir, "comm"))
	name := strings.TrimSuffix(string(comm), "\n")
	return err == nil && slices.ContainsFunc(p.Names, func(n string) bool { return n[:min(len(n), 15)] == name })
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
	switch {
	case err != nil:
		if !p.named(dir, err) {
			return ListeningProcess{}, false, nil
		}
	case !slices.Contains(p.Names, filepath.Base(strings.TrimSuffix(exe, " (deleted)"))):
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
		target, _ := os.Readlink(p.path(dir, "fd", fd.Name())) // "" when it was closed meanwhile
		inode, isSocket := strings.CutPrefix(target, "socket:[")
		if addr, ok := sockets[strings.TrimSuffix(inode, "]")]; isSocket && ok && !slices.Contains(listen, addr) {
			listen = append(listen, addr)
		}
	}
	if len(listen) == 0 {
		return ListeningProcess{}, false, nil
	}
	slices.Sort(listen)
	stat, err := readProc(p.path(dir, "stat"))
	if err != nil {
		return ListeningProcess{}, false, nil
	}
	ppid, start, stopped, err := parseListener(stat)
	if errors.Is(err, ErrProcessEnded) { // exiting: gone, as ProcessStart says
		return ListeningProcess{}, false, nil
	}
	if err != nil {
		return ListeningProcess{}, false, err
	}
	proc := ListeningProcess{PID: pid, PPID: ppid, Start: start, Executable: exe, Listen: listen, Stopped: stopped}
	if raw, err := readProc(p.path(dir, "cmdline")); err == nil {
		proc.Args = strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	}
	proc.Cwd, _ = os.Readlink(p.path(dir, "cwd"))
	return proc, true, nil
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
