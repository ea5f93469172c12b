//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestLeaseFile_TakeOver_RemovesANamedPipeWithoutOpeningIt(t *testing.T) {
	path := leasePath(t)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	obs := observe(t, path)
	if obs.Verdict.Class != Corrupt {
		t.Fatalf("a named pipe was judged %+v", obs.Verdict)
	}
	if removed, err := (&LeaseFile{Path: path}).TakeOver(obs); err != nil || !removed {
		t.Fatalf("TakeOver = %t, %v", removed, err)
	}
}
