//go:build unix

package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A lease directory another user could write, or another user's, is not
// trusted; so is not a lease another user wrote. Root can give files away,
// so the test proves the rules whoever runs it: as root it chowns to
// nobody; otherwise it checks the rules it can set up (modes, links).
func TestTrustedLeaseDirectories(t *testing.T) {
	lease := leasePath(t)
	dir := filepath.Dir(lease)
	if err := Trusted(lease); err != nil {
		t.Fatalf("a missing directory: %v", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err != nil {
		t.Fatalf("this user's private directory: %v", err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("a world-writable directory: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(dir), "linked")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(filepath.Join(link, "server.json")); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a linked directory: %v", err)
	}
	if os.Geteuid() != 0 {
		return
	}
	const nobody = 65534
	if err := os.WriteFile(lease, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(lease, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "written by another user") {
		t.Fatalf("another user's lease: %v", err)
	}
	if err := os.Chown(dir, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := Trusted(lease); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
		t.Fatalf("another user's directory: %v", err)
	}
}
