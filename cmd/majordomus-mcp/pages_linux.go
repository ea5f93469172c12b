package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropStartPages takes out of the resident set the pages of this binary's
// code, most of which only package initialisation ran (B6); what is still
// run faults back from the page cache. Code pages are the file's, so
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
	header := make([]byte, 18)
	if f, err := os.Open(exe); err == nil {
		_, _ = io.ReadFull(f, header)
		f.Close()
	}
	readOnly := ""
	if pristine(header, string(maps)) {
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
// read-only pages: the kernel mapped it as it is (an ELF executable, not
// position-independent) and no loader ran beside it (no shared object is
// mapped). A loader writes relocations into pages it then makes read-only,
// and dropping those would undo its work. header is the binary's first 18
// bytes, maps the process's /proc/self/maps.
func pristine(header []byte, maps string) bool {
	if len(header) < 18 || string(header[:4]) != "\x7fELF" {
		return false
	}
	const etExec = 2
	typ := uint16(header[16]) | uint16(header[17])<<8 // little-endian (EI_DATA 1)
	if header[5] == 2 {
		typ = uint16(header[16])<<8 | uint16(header[17])
	}
	if typ != etExec {
		return false
	}
	for line := range strings.SplitSeq(maps, "\n") {
		if fields := strings.Fields(line); len(fields) >= 6 && strings.Contains(fields[5], ".so") {
			return false
		}
	}
	return true
}
