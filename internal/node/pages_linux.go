package node

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dropStartPages takes out of the resident set the pages of this binary's
// code, most of which only package initialisation ran (B6); what is still
// run faults back from the page cache. Only a mapping of the executable
// that is not writable and holds no private copy (a breakpoint, resident
// or swapped) qualifies: its pages are the file's, and dropping them loses
// nothing. Its read-only data is left: most of it is read again at once.
func dropStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return
	}
	var lo, hi uint64
	mine := false
	for line := range strings.SplitSeq(string(smaps), "\n") { // the last, "", ends the last mapping
		if name, kb, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, " ") {
			mine = mine && (name != "Anonymous" && name != "Swap" || strings.TrimSpace(kb) == "0 kB")
			continue
		}
		if mine {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
		}
		fields := strings.Fields(line) // a mapping: "lo-hi perms offset dev inode path"
		if mine = len(fields) > 5 && fields[1] == "r-xp" && strings.HasSuffix(line, " "+exe); mine {
			from, to, _ := strings.Cut(fields[0], "-")
			lo, _ = strconv.ParseUint(from, 16, 64)
			hi, _ = strconv.ParseUint(to, 16, 64)
		}
	}
}
