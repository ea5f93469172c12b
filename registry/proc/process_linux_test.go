package proc

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// readProc reads a file whole, however many reads it takes, and says why
// it could not as os does.
func TestReadProcReadsAFileWhole(t *testing.T) {
	p := filepath.Join(t.TempDir(), "stat")
	want := bytes.Repeat([]byte("0123456789abcdef"), 300) // past its first buffer, twice over
	if err := os.WriteFile(p, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readProc(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("readProc = %d bytes, %v; want the %d written", len(got), err, len(want))
	}
	if _, err := readProc(p + ".gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("readProc of a missing file: %v; want fs.ErrNotExist", err)
	}
	self, err := readProc("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseStat(self); err != nil {
		t.Fatalf("this process's own stat line: %v", err)
	}
}

// BootTicks reads the clock start times are stamped with: a process
// started between two readings started between them, whatever a
// container made of /proc/uptime.
func TestBootTicksBracketAChildsStart(t *testing.T) {
	before, err := BootTicks()
	if err != nil {
		t.Fatal(err)
	}
	child := startChild(t, "sleep")
	child.Expect(t, "ready")
	after, err := BootTicks()
	if err != nil {
		t.Fatal(err)
	}
	start, err := ProcessStart(child.Cmd.Process.Pid)
	if err != nil || start < before || start > after {
		t.Fatalf("a child started at tick %d (%v), read between ticks %d and %d", start, err, before, after)
	}
}
