package proc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows the sockets come from iphlpapi's GetExtendedTcpTable, which
// names the pid owning each listening socket, and the processes from a
// Toolhelp snapshot; both are documented, neither needs privileges to list
// this user's processes. The socket table is the whole host's, so unlike on
// Linux no process's sockets can be hidden from the observer: a process is
// uninspectable only when it runs a majordomus-mcp executable, holds a
// listening socket, and its owner, start or executable cannot be read.

var (
	modIphlpapi             = windows.NewLazySystemDLL("iphlpapi.dll")
	procGetExtendedTcpTable = modIphlpapi.NewProc("GetExtendedTcpTable")
)

// tcpTableOwnerPIDListener is TCP_TABLE_OWNER_PID_LISTENER: the listening
// sockets, as MIB_TCPTABLE_OWNER_PID or MIB_TCP6TABLE_OWNER_PID.
const tcpTableOwnerPIDListener = 3

func observeListening(names []string) (Listening, error) {
	sockets := map[uint32][]string{}
	for _, af := range []uint32{windows.AF_INET, windows.AF_INET6} {
		table, err := listeningTCPTable(af)
		if af == windows.AF_INET6 && errors.Is(err, windows.ERROR_NOT_SUPPORTED) {
			continue // no IPv6 stack: no IPv6 sockets (as Linux without tcp6)
		}
		if err != nil {
			return Listening{}, fmt.Errorf("%w: %v", ErrListingUnavailable, err)
		}
		for pid, addrs := range table {
			sockets[pid] = append(sockets[pid], addrs...)
		}
	}
	for pid, addrs := range sockets {
		slices.Sort(addrs)
		sockets[pid] = slices.Compact(addrs)
	}
	return observeProcesses(names, sockets)
}

// observeProcesses finds this user's processes running one of names among
// the owners of sockets (pid → sorted listening addresses).
func observeProcesses(names []string, sockets map[uint32][]string) (Listening, error) {
	// Without this process's own user no process can be told to be ours.
	user, err := windows.GetCurrentProcessToken().GetTokenUser() // a pseudo-handle: nothing to close
	if err != nil {
		return Listening{}, fmt.Errorf("%w: reading this process's user: %v", ErrListingUnavailable, err)
	}

	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return Listening{}, fmt.Errorf("%w: process snapshot: %v", ErrListingUnavailable, err)
	}
	defer windows.CloseHandle(snap)
	var out Listening
	entry := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &entry); err == nil; err = windows.Process32Next(snap, &entry) {
		proc, ok, ierr := inspectWindowsProcess(&entry, names, sockets, user.User.Sid)
		switch {
		case ierr != nil:
			out.Uninspectable = append(out.Uninspectable, int(entry.ProcessID))
		case ok:
			out.Processes = append(out.Processes, proc)
		}
	}
	// A walk that stops early would pass for a host without the rest.
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return Listening{}, fmt.Errorf("%w: walking the process snapshot: %v", ErrListingUnavailable, err)
	}
	slices.SortFunc(out.Processes, func(a, b ListeningProcess) int { return a.PID - b.PID })
	slices.Sort(out.Uninspectable)
	return out, nil
}

// inspectWindowsProcess reads one snapshot entry: ok when it is a
// listening majordomus-mcp of the user self; an error when it runs a
// majordomus-mcp executable and listens, yet what it is cannot be read.
// Anything else (another program, no listener, gone, another user's) is
// skipped.
//
// The socket table is read before the snapshot: a pid that changed hands
// in between is caught only when its new process runs another program.
func inspectWindowsProcess(entry *windows.ProcessEntry32, names []string, sockets map[uint32][]string, self *windows.SID) (ListeningProcess, bool, error) {
	pid := entry.ProcessID
	if pid == 0 || !sameExecutableName(windows.UTF16ToString(entry.ExeFile[:]), names) {
		return ListeningProcess{}, false, nil
	}
	listen := sockets[pid]
	if len(listen) == 0 {
		return ListeningProcess{}, false, nil // a bridge, or not serving yet
	}
	h, err := openProcess(int(pid), windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.EPERM) {
		return ListeningProcess{}, false, nil // gone, or another user's
	}
	if err != nil {
		return ListeningProcess{}, false, err
	}
	defer windows.CloseHandle(h)
	ours, err := ownedBy(h, self)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return ListeningProcess{}, false, nil // another user's
	}
	if err != nil || !ours {
		return ListeningProcess{}, false, err
	}
	start, err := startOfHandle(h)
	if errors.Is(err, ErrProcessEnded) {
		return ListeningProcess{}, false, nil
	}
	if err != nil {
		return ListeningProcess{}, false, err
	}
	exe, err := imagePath(h)
	if err != nil {
		if ended(h) {
			return ListeningProcess{}, false, nil
		}
		return ListeningProcess{}, false, err
	}
	if !sameExecutableName(filepath.Base(exe), names) {
		return ListeningProcess{}, false, nil // the pid was reused since the snapshot
	}
	proc := ListeningProcess{PID: int(pid), PPID: int(entry.ParentProcessID), Start: start, Executable: exe, Listen: listen}
	if line, err := commandLine(h); err == nil && line != "" {
		if args, err := windows.DecomposeCommandLine(line); err == nil {
			proc.Args = args
		}
	}
	// Cwd stays "": Windows has no documented call that gives another
	// process's working directory; it lives in that process's PEB, which
	// only reading its memory (PROCESS_VM_READ, undocumented layout) would
	// reach. Not worth it for an inventory.
	return proc, true, nil
}

// listeningTCPTable returns the owning pid → addresses of the host's
// listening TCP sockets of the address family af (AF_INET or AF_INET6).
func listeningTCPTable(af uint32) (map[uint32][]string, error) {
	family := "IPv4"
	if af == windows.AF_INET6 {
		family = "IPv6"
	}
	if err := procGetExtendedTcpTable.Find(); err != nil {
		return nil, fmt.Errorf("GetExtendedTcpTable: %w", err)
	}
	size := uint32(16 << 10)
	// The table may grow between the call that sizes it and the one that
	// fills it; a few rounds with room to spare settle it.
	for range 8 {
		buf := make([]byte, size)
		n := size
		r, _, _ := procGetExtendedTcpTable.Call(uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)),
			0, uintptr(af), tcpTableOwnerPIDListener, 0)
		switch code := syscall.Errno(r); code {
		case 0:
			return parseTCPTable(buf, af == windows.AF_INET6)
		case windows.ERROR_INSUFFICIENT_BUFFER:
			if n <= size {
				n = size
			}
			size = n + n/4 + 1024
		default:
			return nil, fmt.Errorf("GetExtendedTcpTable(%s): %w", family, code)
		}
	}
	return nil, fmt.Errorf("GetExtendedTcpTable(%s): the table kept outgrowing its buffer (%d bytes)", family, size)
}

// ownedBy tells whether the token of the process behind h has the user
// self. An access-denied error says the process is another user's.
func ownedBy(h windows.Handle, self *windows.SID) (bool, error) {
	var tok windows.Token
	if err := windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok); err != nil {
		return false, fmt.Errorf("opening process token: %w", err)
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return false, fmt.Errorf("reading process user: %w", err)
	}
	return windows.EqualSid(u.User.Sid, self), nil
}

// ended tells whether the process behind h (opened with SYNCHRONIZE) has
// exited.
func ended(h windows.Handle) bool {
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == windows.WAIT_OBJECT_0
}

// imagePath returns the full Win32 path of the executable the process
// behind h runs.
func imagePath(h windows.Handle) (string, error) {
	for size := uint32(windows.MAX_PATH); ; size *= 2 {
		buf := make([]uint16, size)
		n := size
		err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n)
		if err == nil {
			return windows.UTF16ToString(buf[:n]), nil
		}
		if !errors.Is(err, windows.ERROR_INSUFFICIENT_BUFFER) || size >= windows.MAX_LONG_PATH {
			return "", fmt.Errorf("reading process image: %w", err)
		}
	}
}

// commandLine returns the command line of the process behind h, through
// NtQueryInformationProcess(ProcessCommandLineInformation) (Windows 8.1
// and later; PROCESS_QUERY_LIMITED_INFORMATION suffices). It fills the
// buffer with a UNICODE_STRING whose characters follow it in that buffer.
func commandLine(h windows.Handle) (string, error) {
	size := uint32(1024)
	for range 6 {
		buf := make([]byte, size)
		var need uint32
		err := windows.NtQueryInformationProcess(h, windows.ProcessCommandLineInformation, unsafe.Pointer(&buf[0]), size, &need)
		switch err {
		case nil:
			return unicodeStringInBuffer(buf)
		case windows.STATUS_INFO_LENGTH_MISMATCH, windows.STATUS_BUFFER_TOO_SMALL, windows.STATUS_BUFFER_OVERFLOW:
			if need <= size {
				need = size * 2
			}
			size = need
		default:
			return "", fmt.Errorf("reading command line: %w", err)
		}
	}
	return "", errors.New("reading command line: it kept outgrowing its buffer")
}

// unicodeStringInBuffer decodes the UNICODE_STRING at the start of buf,
// whose characters must lie within buf itself.
func unicodeStringInBuffer(buf []byte) (string, error) {
	var us windows.NTUnicodeString
	if uintptr(len(buf)) < unsafe.Sizeof(us) {
		return "", errors.New("reading command line: short answer")
	}
	length := uintptr(binary.LittleEndian.Uint16(buf[unsafe.Offsetof(us.Length):]))
	if length == 0 {
		return "", nil
	}
	ptr := *(*uintptr)(unsafe.Pointer(&buf[unsafe.Offsetof(us.Buffer)]))
	base := uintptr(unsafe.Pointer(&buf[0]))
	if ptr < base || ptr-base > uintptr(len(buf)) || length > uintptr(len(buf))-(ptr-base) {
		return "", errors.New("reading command line: its characters lie outside the answer")
	}
	off := ptr - base
	chars := make([]uint16, length/2)
	for i := range chars {
		chars[i] = binary.LittleEndian.Uint16(buf[off+uintptr(2*i):])
	}
	return windows.UTF16ToString(chars), nil
}
