package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The binary's code, all of it made resident, leaves the resident set,
// and the process goes on running it.
func TestDroppingTheStartPagesTakesTheCodeOutOfTheResidentSet(t *testing.T) {
	lo, hi, _ := codeMapping(t)
	if _, _, errno := unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_POPULATE_READ); errno != 0 {
		t.Fatalf("populating the code: %v", errno)
	}
	_, _, before := codeMapping(t)
	dropStartPages()
	_, _, after := codeMapping(t)
	if before < (hi-lo)/1024/2 || after > before/2 {
		t.Fatalf("the code's resident set went from %d to %d kB of %d", before, after, (hi-lo)/1024)
	}
}

// codeMapping is the executable's code mapping in smaps: where, and how
// many kB of it are resident.
func codeMapping(t *testing.T) (lo, hi, rssKB uintptr) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	mine := false
	for line := range strings.SplitSeq(string(smaps), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) > 5 && fields[1] == "r-xp" && strings.HasSuffix(line, " "+exe):
			from, to, _ := strings.Cut(fields[0], "-")
			l, _ := strconv.ParseUint(from, 16, 64)
			h, _ := strconv.ParseUint(to, 16, 64)
			lo, hi, mine = uintptr(l), uintptr(h), true
		case mine && len(fields) > 1 && fields[0] == "Rss:":
			kb, _ := strconv.ParseUint(fields[1], 10, 64)
			return lo, hi, uintptr(kb)
		}
	}
	t.Fatalf("no code mapping of %s in smaps", exe)
	return 0, 0, 0
}
