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

// Read-only data is dropped only from a binary that nothing can have
// written to: an executable the kernel mapped as it is, with no loader.
func TestOnlyAPristineBinaryLosesItsReadOnlyData(t *testing.T) {
	exec := func(order byte, typ uint16) []byte {
		h := make([]byte, 18)
		copy(h, "\x7fELF")
		h[5] = order
		if order == 2 {
			h[16], h[17] = byte(typ>>8), byte(typ)
		} else {
			h[16], h[17] = byte(typ), byte(typ>>8)
		}
		return h
	}
	alone := "00400000-00b8c000 r-xp 00000000 fd:01 42 /usr/bin/majordomus-mcp\n" +
		"00b8c000-012fe000 r--p 0078c000 fd:01 42 /usr/bin/majordomus-mcp\n" +
		"7ffd1a3b2000-7ffd1a3b4000 r-xp 00000000 00:00 0 [vdso]\n"
	loaded := alone + "7f9488381000-7f94883a7000 r--p 00000000 fd:01 7 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	for _, c := range []struct {
		what   string
		header []byte
		maps   string
		want   bool
	}{
		{"a static executable", exec(1, 2), alone, true},
		{"a big-endian one", exec(2, 2), alone, true},
		{"a position-independent one", exec(1, 3), alone, false},
		{"one a loader relocated", exec(1, 2), loaded, false},
		{"no ELF header", []byte("#!/bin/sh\necho hi\n"), alone, false},
		{"a header cut short", exec(1, 2)[:10], alone, false},
	} {
		if got := pristine(c.header, c.maps); got != c.want {
			t.Errorf("%s: pristine %v, want %v", c.what, got, c.want)
		}
	}
}
