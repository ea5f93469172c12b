package proc

// The formats of Linux's /proc, parsed without touching the system so that
// their tests run on every operating system; process_linux.go and
// listening_linux.go read the files.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// ticksPerSecond is USER_HZ, the unit of /proc's clock ticks. It is 100 on
// every Linux architecture Go supports, and /proc reports in it whatever
// the kernel's own HZ is.
const ticksPerSecond = 100

// pfExiting is the kernel's PF_EXITING, in field 9 (flags) of a stat line:
// set as a process begins to exit. A process killed -9 has its sockets
// closed before it is a zombie, and was seen here to show state R for up
// to 4 ms after its clients saw their connections drop: it is gone.
const pfExiting = 0x4

// parseStat extracts field 22 (starttime) of a /proc/<pid>/stat line, with
// [ErrProcessEnded] for a process that exited (Z, X) or is exiting. The
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
	v, err := strconv.ParseUint(string(fields[index]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parsing /proc stat start time: %w", err)
	}
	if state := string(fields[0]); state == "Z" || state == "X" {
		return v, ErrProcessEnded
	}
	if flags, err := strconv.ParseUint(string(fields[9-3]), 10, 64); err == nil && flags&pfExiting != 0 {
		return v, ErrProcessEnded
	}
	return v, nil
}

// parseListener extracts fields 4 (ppid) and 22 (starttime) of a
// /proc/<pid>/stat line, counting from the last ')' as parseStat does, and
// whether field 3 (state) says stopped: T by a signal, t by a debugger.
func parseListener(b []byte) (ppid int, start uint64, stopped bool, err error) {
	if start, err = parseStat(b); err != nil {
		return 0, 0, false, err
	}
	fields := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if ppid, err = strconv.Atoi(string(fields[1])); err != nil { // fields[0] is field 3
		return 0, 0, false, fmt.Errorf("parsing /proc stat ppid: %w", err)
	}
	return ppid, start, string(fields[0]) == "T" || string(fields[0]) == "t", nil
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
