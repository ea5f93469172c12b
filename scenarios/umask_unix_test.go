//go:build unix

package scenarios

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// A checkout cloned under umask 002 — every directory 0775, its group the
// user's own private group, with no other member, as Debian, Ubuntu and
// Fedora make them — shares: the first client serves it, the next one
// attaches, one board (docs/design.md#sharing-heals). The modes are set
// here, whatever this process's umask, from the test's own temporary
// directory down (above it /tmp is sticky), and every directory is given
// this user's primary group. The group database is the machine's own: the
// scenario needs that group to have no member but this user (as root, group
// 0 on Debian; a contributor's user-private group), and fails saying so,
// never skips, where it has another. A group with another member:
// registry.TestADirectoryItsGroupMayWriteIsTrustedWhenTheGroupIsItsOwners.
func TestACheckoutClonedUnderUmask002Shares(t *testing.T) {
	dir := checkout(t)
	if err := os.MkdirAll(filepath.Join(dir, ".ai", "local", "state"), 0o775); err != nil {
		t.Fatal(err)
	}
	gid := os.Getegid()
	groupShared := func(path string) {
		if err := os.Lchown(path, -1, gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o775); err != nil {
			t.Fatal(err)
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			groupShared(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	temp := filepath.Dir(dir) // t.TempDir(), and the test's own above it
	groupShared(temp)
	groupShared(filepath.Dir(temp))
	layerEdited(t, dir)

	a := shared(t, dir)
	initialize(t, a, "claude-code")
	line, err := a.WaitLogUnless(ctx(t), servedAlone, "shared server listening on")
	if err != nil {
		t.Fatalf("%v\n(this scenario needs this user's primary group, gid %d, to have no member but uid %d in /etc/group and /etc/passwd, as a user-private group has)",
			err, gid, os.Geteuid())
	}
	url := fieldOf(t, line, "url")
	b := shared(t, dir)
	initialize(t, b, "codex")
	attached(t, b, url)
	if board := peersOf(t, b); board.Count != 2 || board.Caller != "p2" {
		t.Fatalf("the attached client's board: %+v", board)
	}
	for _, rel := range []string{".", ".ai", ".ai/local", ".ai/local/state", "..", "../.."} {
		if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Mode().Perm() != 0o775 {
			t.Fatalf("%s: %v (%v); the scenario is not what it says", rel, fi, err)
		}
	}
	if fi, err := os.Stat(filepath.Dir(leasePath(dir))); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the lease directory: %v (%v), want 0700", fi, err)
	}
}
