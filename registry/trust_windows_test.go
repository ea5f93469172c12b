//go:build windows

package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// The lease directory Acquire makes is this user's alone, whatever its
// parent lets others do; one another principal may write is not trusted.
func TestTrustedLeaseDirectoriesOnWindows(t *testing.T) {
	root := testtemp.Dir(t)
	lease := Path(root, "")
	if err := Trusted(lease); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if err := (&LeaseFile{Path: lease}).Acquire(newLease(t)); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err != nil {
		t.Fatalf("the directory Acquire made, and its lease: %v", err)
	}

	// A lease directory everyone may write, made so by someone's hand.
	other := testtemp.Dir(t)
	open := filepath.Join(other, ".ai", "local", "state", "mcp")
	if err := os.MkdirAll(open, 0o755); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;OICI;FA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, _ := sd.DACL()
	if err := windows.SetNamedSecurityInfo(open, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(Path(other, "")); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a directory everyone may write: %v", err)
	}
}
