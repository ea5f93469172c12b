package main

import (
	"encoding/binary"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropStartPages takes out of the resident set the pages of this binary's
// code, most of which only package initialisation ran (B6); what is still
// run faults back from the page cache. A bridge drops them once more when
// it only relays (node's tuning). Code pages are the file's, so
// dropping them loses nothing, unless a debugger wrote breakpoints into
// them: a traced process keeps its pages. Its read-only data (type data,
// the tables the runtime unwinds stacks with) goes too where nothing can
// have written it (pristine): what is read again faults back. maps, not
// smaps, is read: smaps costs a millisecond or more of walking page
// tables.
func dropStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil || !strings.Contains(string(status), "\nTracerPid:\t0\n") {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	head := make([]byte, 4096)
	if f, err := os.Open("/proc/self/exe"); err == nil { // the file running, even if its path now names another
		n, _ := io.ReadFull(f, head)
		head = head[:n]
		f.Close()
	}
	readOnly := ""
	if pristine(head) {
		readOnly = "r--p"
	}
	for line := range strings.SplitSeq(string(maps), "\n") {
		fields := strings.Fields(line) // "lo-hi perms offset dev inode path"
		if len(fields) < 6 || (fields[1] != "r-xp" && fields[1] != readOnly) || !strings.HasSuffix(line, " "+exe) {
			continue
		}
		from, to, _ := strings.Cut(fields[0], "-")
		lo, _ := strconv.ParseUint(from, 16, 64)
		hi, _ := strconv.ParseUint(to, 16, 64)
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
	}
}

// pristine reports whether no one can have written to the binary's
// read-only pages, from head, its first bytes: the kernel maps an ELF
// executable as it is (ET_EXEC), and nothing rewrites it unless it asks
// for a loader (PT_INTERP), is linked for one (PT_DYNAMIC), or has pages
// made read-only once relocated (PT_GNU_RELRO: a static C library does
// that itself). Dropping pages something wrote would undo its work. The
// program headers are read where the ELF header says, within head.
func pristine(head []byte) bool {
	if len(head) < 64 || string(head[:4]) != "\x7fELF" {
		return false
	}
	var order binary.ByteOrder = binary.LittleEndian
	if head[5] == 2 {
		order = binary.BigEndian
	}
	if order.Uint16(head[16:]) != 2 { // ET_EXEC
		return false
	}
	var off uint64
	var size, n int
	switch head[4] {
	case 2: // 64-bit
		off, size, n = order.Uint64(head[32:]), int(order.Uint16(head[54:])), int(order.Uint16(head[56:]))
	case 1: // 32-bit
		off, size, n = uint64(order.Uint32(head[28:])), int(order.Uint16(head[42:])), int(order.Uint16(head[44:]))
	default:
		return false
	}
	if size < 4 || off > uint64(len(head)) || int(off)+n*size > len(head) {
		return false
	}
	for i := range n {
		switch order.Uint32(head[int(off)+i*size:]) {
		case 2, 3, 0x6474e552: // PT_DYNAMIC, PT_INTERP, PT_GNU_RELRO
			return false
		}
	}
	return true
}
