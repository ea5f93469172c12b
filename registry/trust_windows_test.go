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

// A lease directory this user may not open to read who owns it and who
// may write it (its access control list, made by another user, grants
// traversing and listing it but not READ_CONTROL) is not trusted while the
// lease in it can be read: the election reads the lease by its name, never
// through the directory's handle, and would judge, and attach to, a lease
// another user wrote. (Trusted took the failed open for "unreadable, left
// to the election", and said nil.) Wine enforces no access control list:
// the denial is Windows's answer, given at the one call that meets it.
func TestALeaseDirectoryThatCannotBeCheckedIsNotTrusted(t *testing.T) {
	root := testtemp.Dir(t)
	dir := filepath.Join(root, ".ai", "local", "state", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lease := Path(root, "")
	if err := os.WriteFile(lease, []byte("{}"), 0o600); err != nil { // another user's lease, readable by all
		t.Fatal(err)
	}
	allow(t, dir, "D:P(A;;FA;;;WD)") // another user's lease directory, which everyone may write
	defer func(open func(string) (windows.Handle, error)) { openDir = open }(openDir)
	openDir = func(path string) (windows.Handle, error) {
		if path == dir {
			return windows.InvalidHandle, &os.PathError{Op: "open", Path: path, Err: windows.ERROR_ACCESS_DENIED}
		}
		return openDirHandle(path)
	}
	if s := Read(lease); s.Found != Regular {
		t.Fatalf("the election reads %v (%v): the test proves nothing", s.Found, s.Err)
	}
	if err := Trusted(lease); err == nil {
		t.Fatal("Trusted = nil for a lease directory that could not be checked, whose lease the election reads")
	}
}

// A lease directory made by someone's hand (copied with its checkout,
// restored from a backup) whose access control list lets other users read
// what is made in it is not trusted: the lease written there inherits that
// list, and its secret would be theirs to read. Unix makes the lease 0600
// whatever its directory; here the directory decides (docs/security.md:
// its list admits only its user, SYSTEM and the Administrators). (Trusted
// checked only who may write it, and trusted it.) An entry only the files
// made inside inherit is TestWritersAmong's and TestReadersAmong's: wine
// keeps none, making a list from the Unix mode.
func TestALeaseDirectoryOthersMayReadIsNotTrusted(t *testing.T) {
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	root := testtemp.Dir(t)
	dir := filepath.Join(root, ".ai", "local", "state", "mcp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	allow(t, dir, "D:P(A;OICI;FA;;;"+me.String()+")(A;OICI;FR;;;WD)")
	if err := Trusted(Path(root, "")); err == nil || !strings.Contains(err.Error(), "the lease directory "+dir+" is readable by other users") {
		t.Fatalf("a lease directory everyone may read: Trusted = %v", err)
	}
}
