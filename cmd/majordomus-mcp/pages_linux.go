package main

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropStartPages takes out of the resident set the pages of this binary's
// code, most of which only package initialisation ran (B6); what is still
// run faults back from the page cache. Code pages are the file's, so
// dropping them loses nothing, unless a debugger wrote breakpoints into
// them: a traced process keeps its pages. Its read-only data is left: most
// of it is read again at once. maps, not smaps, is read: smaps costs a
// millisecond or more of walking page tables.
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
	for line := range strings.SplitSeq(string(maps), "\n") {
		fields := strings.Fields(line) // "lo-hi perms offset dev inode path"
		if len(fields) < 6 || fields[1] != "r-xp" || !strings.HasSuffix(line, " "+exe) {
			continue
		}
		from, to, _ := strings.Cut(fields[0], "-")
		lo, _ := strconv.ParseUint(from, 16, 64)
		hi, _ := strconv.ParseUint(to, 16, 64)
		_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
	}
}
