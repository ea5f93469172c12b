package proc

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
)

// The tables are built byte by byte as Windows lays them out on a
// little-endian machine, not from Go structs, so that a mistake in the
// layout cannot hide in both the test and the parser.

func winLE32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// winPortDWORD is a port as Windows stores it: network byte order in the low
// 16 bits of a little-endian DWORD; the high bits hold junk on purpose.
func winPortDWORD(port uint16) []byte { return []byte{byte(port >> 8), byte(port), 0xAB, 0xCD} }

func winTCPTable(rows ...[]byte) []byte {
	b := winLE32(uint32(len(rows)))
	for _, r := range rows {
		b = append(b, r...)
	}
	return b
}

func winTCPRow(state uint32, ip [4]byte, port uint16, pid uint32) []byte {
	var r []byte
	r = append(r, winLE32(state)...)
	r = append(r, ip[:]...) // dwLocalAddr: network byte order in memory
	r = append(r, winPortDWORD(port)...)
	r = append(r, 10, 0, 0, 9) // dwRemoteAddr
	r = append(r, winPortDWORD(443)...)
	r = append(r, winLE32(pid)...)
	if len(r) != 24 {
		panic("MIB_TCPROW_OWNER_PID is 24 bytes")
	}
	return r
}

func winTCP6Row(state uint32, ip [16]byte, scope uint32, port uint16, pid uint32) []byte {
	var r []byte
	r = append(r, ip[:]...)
	r = append(r, winLE32(scope)...)
	r = append(r, winPortDWORD(port)...)
	r = append(r, make([]byte, 16)...) // ucRemoteAddr
	r = append(r, winLE32(0)...)       // dwRemoteScopeId
	r = append(r, winPortDWORD(0)...)
	r = append(r, winLE32(state)...)
	r = append(r, winLE32(pid)...)
	if len(r) != 56 {
		panic("MIB_TCP6ROW_OWNER_PID is 56 bytes")
	}
	return r
}

func TestParseTCPTableIPv4(t *testing.T) {
	b := winTCPTable(
		winTCPRow(2, [4]byte{127, 0, 0, 1}, 8741, 100),
		winTCPRow(2, [4]byte{0, 0, 0, 0}, 8080, 100),
		winTCPRow(2, [4]byte{127, 0, 0, 1}, 8741, 100), // the same address twice
		winTCPRow(2, [4]byte{192, 168, 1, 20}, 443, 200),
		winTCPRow(5, [4]byte{127, 0, 0, 1}, 50000, 300), // ESTABLISHED: not a listener
		winTCPRow(2, [4]byte{0, 0, 0, 0}, 445, 4),
	)
	b = append(b, 0xEE, 0xEE, 0xEE) // the buffer was larger than the table
	got, err := parseTCPTable(b, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32][]string{
		100: {"0.0.0.0:8080", "127.0.0.1:8741"},
		200: {"192.168.1.20:443"},
		4:   {"0.0.0.0:445"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseTCPTable:\n got %v\nwant %v", got, want)
	}
}

func TestParseTCPTableIPv6(t *testing.T) {
	loopback := [16]byte{15: 1}
	linkLocal := [16]byte{0: 0xfe, 1: 0x80, 15: 0x2a}
	mapped := [16]byte{10: 0xff, 11: 0xff, 12: 127, 13: 0, 14: 0, 15: 1}
	doc := [16]byte{0: 0x20, 1: 0x01, 2: 0x0d, 3: 0xb8, 14: 0x12, 15: 0x34}
	got, err := parseTCPTable(winTCPTable(
		winTCP6Row(2, loopback, 0, 8742, 100),
		winTCP6Row(2, [16]byte{}, 0, 8742, 100),
		winTCP6Row(2, linkLocal, 12, 9000, 200), // the scope id is dropped
		winTCP6Row(2, mapped, 0, 9001, 200),
		winTCP6Row(2, doc, 0, 65535, 300),
		winTCP6Row(1, loopback, 0, 9002, 400), // CLOSED
	), true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint32][]string{
		100: {"[::1]:8742", "[::]:8742"},
		200: {"127.0.0.1:9001", "[fe80::2a]:9000"},
		300: {"[2001:db8::1234]:65535"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseTCPTable:\n got %v\nwant %v", got, want)
	}
}

func TestParseTCPTableEmpty(t *testing.T) {
	for _, ipv6 := range []bool{false, true} {
		got, err := parseTCPTable(winLE32(0), ipv6)
		if err != nil || len(got) != 0 {
			t.Errorf("empty table (ipv6 %v): %v %v", ipv6, got, err)
		}
	}
}

func TestParseTCPTableTruncated(t *testing.T) {
	v4 := winTCPTable(winTCPRow(2, [4]byte{127, 0, 0, 1}, 8741, 100), winTCPRow(2, [4]byte{127, 0, 0, 1}, 8742, 100))
	v6 := winTCPTable(winTCP6Row(2, [16]byte{15: 1}, 0, 8742, 100))
	huge := winLE32(0xFFFFFFFF) // announces more rows than any buffer holds
	tests := []struct {
		name string
		b    []byte
		ipv6 bool
	}{
		{"nil", nil, false},
		{"no full count", []byte{1, 0, 0}, true},
		{"IPv4 missing a byte", v4[:len(v4)-1], false},
		{"IPv4 missing a row", v4[:4+24], false},
		{"IPv6 missing a byte", v6[:len(v6)-1], true},
		{"IPv4 table read as IPv6", v4, true},
		{"huge count", append(huge, make([]byte, 56)...), true},
	}
	for _, tt := range tests {
		got, err := parseTCPTable(tt.b, tt.ipv6)
		if err == nil {
			t.Errorf("%s: parsed as %v, want an error", tt.name, got)
		} else if !strings.Contains(err.Error(), "TCP table") {
			t.Errorf("%s: error %q does not say what it read", tt.name, err)
		}
	}
}

func TestSameExecutableName(t *testing.T) {
	both := []string{"majordomus-mcp", "majordomus-mcp.exe"}
	tests := []struct {
		base  string
		names []string
		want  bool
	}{
		{"majordomus-mcp.exe", both, true},
		{"MAJORDOMUS-MCP.EXE", both, true},
		{"Majordomus-Mcp.Exe", []string{"majordomus-mcp"}, true},
		{"majordomus-mcp.exe", []string{"majordomus-mcp.exe"}, true},
		{"majordomus-mcp", []string{"majordomus-mcp.exe"}, true},
		{"majordomus-mcp", []string{"majordomus-mcp"}, true},
		{"majordomus-mcp.exe.exe", both, false},
		{"majordomus-mcp2.exe", both, false},
		{"majordomus.exe", both, false},
		{"majordomus-mcp.com", both, false},
		{"python.exe", both, false},
		{".exe", []string{""}, false},
		{"", []string{""}, false},
		{"", both, false},
		{"majordomus-mcp.exe", nil, false},
		{"registry.test.exe", []string{"registry.test.exe"}, true},
	}
	for _, tt := range tests {
		if got := sameExecutableName(tt.base, tt.names); got != tt.want {
			t.Errorf("sameExecutableName(%q, %q) = %v, want %v", tt.base, tt.names, got, tt.want)
		}
	}
}
