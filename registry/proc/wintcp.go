package proc

// What Windows's TCP table and process names say, judged without touching
// the system so that the logic's tests run on every operating system
// (listening_windows.go calls Windows).

import (
	"encoding/binary"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Row sizes of the tables GetExtendedTcpTable fills for the class
// TCP_TABLE_OWNER_PID_*: both tables are a DWORD dwNumEntries followed by
// that many rows, every field a DWORD or a byte array, so nothing pads.
const (
	// MIB_TCPROW_OWNER_PID: dwState, dwLocalAddr, dwLocalPort,
	// dwRemoteAddr, dwRemotePort, dwOwningPid.
	winTCPRowSize = 6 * 4
	// MIB_TCP6ROW_OWNER_PID: ucLocalAddr[16], dwLocalScopeId, dwLocalPort,
	// ucRemoteAddr[16], dwRemoteScopeId, dwRemotePort, dwState,
	// dwOwningPid.
	winTCP6RowSize = 16 + 4 + 4 + 16 + 4 + 4 + 4 + 4

	// winTCPStateListen is MIB_TCP_STATE_LISTEN.
	winTCPStateListen = 2
)

// parseTCPTable reads a MIB_TCPTABLE_OWNER_PID (ipv6 false) or a
// MIB_TCP6TABLE_OWNER_PID (ipv6 true) as GetExtendedTcpTable leaves it in
// memory and returns, for every owning pid, the addresses ("127.0.0.1:8741",
// "[::1]:8742") of its listening sockets, sorted and without duplicates.
// Rows in any other state than LISTEN are ignored. A buffer too short for
// the rows it announces is an error; bytes after them are not (the buffer
// given to Windows may be larger than the table).
//
// DWORDs are in host byte order, little-endian on every Windows
// architecture; an IPv4 address is in network byte order in memory, as an
// IPv6 address is; a port is in network byte order in the low 16 bits of
// its DWORD, the high 16 bits undefined. The IPv6 scope id is dropped, as
// /proc/net/tcp6 drops it on Linux.
func parseTCPTable(b []byte, ipv6 bool) (map[uint32][]string, error) {
	family, rowSize := "IPv4", winTCPRowSize
	if ipv6 {
		family, rowSize = "IPv6", winTCP6RowSize
	}
	if len(b) < 4 {
		return nil, fmt.Errorf("%s TCP table of %d bytes has no entry count", family, len(b))
	}
	n := uint64(binary.LittleEndian.Uint32(b))
	if need := 4 + n*uint64(rowSize); need > uint64(len(b)) {
		return nil, fmt.Errorf("%s TCP table truncated: %d rows need %d bytes, %d given", family, n, need, len(b))
	}
	out := map[uint32][]string{}
	for i := range int(n) {
		row := b[4+i*rowSize : 4+(i+1)*rowSize]
		var ip net.IP
		var port []byte
		var state, pid uint32
		if ipv6 {
			ip = net.IP(slices.Clone(row[0:16]))
			port = row[20:22]
			state = binary.LittleEndian.Uint32(row[48:52])
			pid = binary.LittleEndian.Uint32(row[52:56])
		} else {
			state = binary.LittleEndian.Uint32(row[0:4])
			ip = net.IPv4(row[4], row[5], row[6], row[7]).To4()
			port = row[8:10]
			pid = binary.LittleEndian.Uint32(row[20:24])
		}
		if state != winTCPStateListen {
			continue
		}
		addr := net.JoinHostPort(ip.String(), strconv.Itoa(int(binary.BigEndian.Uint16(port))))
		out[pid] = append(out[pid], addr)
	}
	for pid, addrs := range out {
		slices.Sort(addrs)
		out[pid] = slices.Compact(addrs)
	}
	return out, nil
}

// sameExecutableName tells whether base, the file name of a Windows
// process's executable ("Majordomus-MCP.EXE"), is one of names: in any
// case, with or without the ".exe" suffix on either side, as Windows itself
// matches file names. Empty names match nothing.
func sameExecutableName(base string, names []string) bool {
	trim := func(s string) string {
		if len(s) >= 4 && strings.EqualFold(s[len(s)-4:], ".exe") {
			return s[:len(s)-4]
		}
		return s
	}
	b := trim(base)
	if b == "" {
		return false
	}
	return slices.ContainsFunc(names, func(name string) bool { return strings.EqualFold(b, trim(name)) }) // b is not blank
}
