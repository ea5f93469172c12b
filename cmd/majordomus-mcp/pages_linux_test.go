package main

import (
	"encoding/binary"
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
// written to: an executable the kernel maps as it is, with no loader and
// no pages made read-only once relocated.
func TestOnlyAPristineBinaryLosesItsReadOnlyData(t *testing.T) {
	const load, note, stack, interp, dynamic, relro = 1, 4, 0x6474e551, 3, 2, 0x6474e552
	goStatic := []uint32{6, note, load, load, load, stack} // as Go's linker writes one
	for _, c := range []struct {
		what string
		head []byte
		want bool
	}{
		{"a static Go executable", elfHead(2, binary.LittleEndian, 2, goStatic...), true},
		{"a big-endian one", elfHead(2, binary.BigEndian, 2, goStatic...), true},
		{"a 32-bit one", elfHead(1, binary.LittleEndian, 2, goStatic...), true},
		{"a position-independent one", elfHead(2, binary.LittleEndian, 3, goStatic...), false},
		{"one that asks for a loader", elfHead(2, binary.LittleEndian, 2, 6, interp, load, load, dynamic), false},
		{"a static C library's, relocated in place", elfHead(2, binary.LittleEndian, 2, load, load, relro, stack), false},
		{"program headers cut off", elfHead(2, binary.LittleEndian, 2, goStatic...)[:80], false},
		{"no ELF header", []byte("#!/bin/sh\necho hi\n"), false},
	} {
		if got := pristine(c.head); got != c.want {
			t.Errorf("%s: pristine %v, want %v", c.what, got, c.want)
		}
	}
}

// elfHead is an ELF header of the class (1: 32-bit, 2: 64-bit), byte
// order and type given, followed by program headers of the types given.
func elfHead(class byte, order binary.ByteOrder, typ uint16, progs ...uint32) []byte {
	ehsize, phsize := 64, 56
	if class == 1 {
		ehsize, phsize = 52, 32
	}
	h := make([]byte, ehsize+len(progs)*phsize)
	copy(h, "\x7fELF")
	h[4], h[5], h[6] = class, 1, 1
	if order == binary.BigEndian {
		h[5] = 2
	}
	order.PutUint16(h[16:], typ)
	if class == 1 {
		order.PutUint32(h[28:], uint32(ehsize))
		order.PutUint16(h[42:], uint16(phsize))
		order.PutUint16(h[44:], uint16(len(progs)))
	} else {
		order.PutUint64(h[32:], uint64(ehsize))
		order.PutUint16(h[54:], uint16(phsize))
		order.PutUint16(h[56:], uint16(len(progs)))
	}
	for i, p := range progs {
		order.PutUint32(h[ehsize+i*phsize:], p)
	}
	return h
}
