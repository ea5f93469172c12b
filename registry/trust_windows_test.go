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
	root := checkoutRoot(t)
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
	allow(t, open, "D:P(A;OICI;FA;;;WD)")
	if err := Trusted(Path(other, "")); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a directory everyone may write: %v", err)
	}

	// Every offending entry is named at once: the lease directory, and the
	// lease that others may write too. (Which principals each names is
	// TestWritersAmong's: wine keeps no ACE but Everyone's here.)
	leased := Path(other, "")
	if err := os.WriteFile(leased, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	allow(t, leased, "D:P(A;;FA;;;WD)")
	err := Trusted(leased)
	for _, want := range []string{"the lease directory " + open + " is writable", "the lease " + leased + " is writable"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a lease directory and a lease everyone may write: %v; want it to name %q", err, want)
		}
	}
}

// allow gives path the access control list sddl describes, inheriting
// nothing.
func allow(t *testing.T, path, sddl string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, _ := sd.DACL()
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
}
