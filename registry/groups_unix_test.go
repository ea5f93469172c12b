//go:build unix

package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

// A checkout whose directories its group may write, as `git clone` makes
// them under umask 002, is trusted when that group's only member is their
// owner, and not when it has another; so is a lease directory its group
// may write. The directories are real, their modes and group set here;
// the group and passwd files are the test's own (what the machine's
// databases say decides nothing), naming this process's user and group.
func TestADirectoryItsGroupMayWriteIsTrustedWhenTheGroupIsItsOwners(t *testing.T) {
	for _, tc := range []struct {
		name    string
		g775    []string // from the checkout's parent, made 0775
		g770    bool     // the lease directory made 0770
		members string   // listed in the group's line
		extra   string   // added to the group file
		culprit string   // the directory the reason names; "" when trusted
	}{
		{"all the way, the owner's own group", []string{".", "repo", "repo/.ai", "repo/.ai/local", "repo/.ai/local/state"}, true, "", "", ""},
		{"all the way, the group listing its owner", []string{".", "repo", "repo/.ai", "repo/.ai/local", "repo/.ai/local/state"}, true, "me", "", ""},
		{"all the way, the group listing another user", []string{".", "repo", "repo/.ai", "repo/.ai/local", "repo/.ai/local/state"}, false, "me,bob", "", "repo/.ai"},
		{"the checkout's parent, another member", []string{"."}, false, "bob", "", "."},
		{"local, another member", []string{"repo/.ai/local"}, false, "bob", "", "repo/.ai/local"},
		{"state, another member", []string{"repo/.ai/local/state"}, false, "bob", "", "repo/.ai/local/state"},
		{"the lease directory, the owner's own group", nil, true, "", "", ""},
		{"the lease directory, another member", nil, true, "bob", "", "repo/.ai/local/state/mcp"},
		{"a NIS line in the group file", []string{"repo"}, false, "", "+:::\n", "repo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := testtemp.Dir(t)
			lease := Path(filepath.Join(parent, "repo"), "")
			if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, rel := range tc.g775 {
				groupMayWriteDir(t, filepath.Join(parent, rel), 0o775)
			}
			if tc.g770 {
				groupMayWriteDir(t, filepath.Dir(lease), 0o770)
			}
			groups := testGroups(t, tc.members, tc.extra)
			err := trustedWith(lease, groups.check())
			if tc.culprit == "" {
				if err != nil {
					t.Fatalf("not trusted: %v", err)
				}
				return
			}
			culprit := filepath.Join(parent, tc.culprit)
			if err == nil || !strings.Contains(err.Error(), culprit+" ") || !strings.Contains(err.Error(), "writable by other users") ||
				!strings.Contains(err.Error(), "chmod g-w "+culprit+" ") {
				t.Fatalf("Trusted = %v; want a reason naming %s and chmod g-w", err, culprit)
			}
		})
	}
}

// The group files are read again when they change: a member added to the
// group is seen by the next check.
func TestAMemberAddedToTheGroupIsSeen(t *testing.T) {
	parent := testtemp.Dir(t)
	lease := Path(filepath.Join(parent, "repo"), "")
	if err := os.MkdirAll(filepath.Dir(lease), 0o700); err != nil {
		t.Fatal(err)
	}
	groupMayWriteDir(t, filepath.Join(parent, "repo"), 0o775)
	groups := testGroups(t, "", "")
	if err := trustedWith(lease, groups.check()); err != nil {
		t.Fatalf("the owner's own group: %v", err)
	}
	writeGroupFile(t, groups.group, "me,bob", "")
	if err := trustedWith(lease, groups.check()); err == nil || !strings.Contains(err.Error(), "bob") {
		t.Fatalf("after bob joined the group: %v", err)
	}
	if err := os.Remove(groups.group); err != nil {
		t.Fatal(err)
	}
	if err := trustedWith(lease, groups.check()); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("without a group file: %v", err)
	}
}

// groupMayWriteDir gives dir this process's group and mode.
func groupMayWriteDir(t testing.TB, dir string, mode os.FileMode) {
	t.Helper()
	if err := os.Lchown(dir, -1, os.Getegid()); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// testGroups writes a passwd file with this process's user ("me", its
// primary group this process's) and bob, and a group file whose line for
// this process's group lists members; extra is added to the group file.
func testGroups(t testing.TB, members, extra string) *accountFiles {
	t.Helper()
	dir := testtemp.Dir(t)
	f := &accountFiles{group: filepath.Join(dir, "group"), passwd: filepath.Join(dir, "passwd")}
	me, gid := os.Geteuid(), os.Getegid()
	passwd := fmt.Sprintf("me:x:%d:%d::/:/bin/sh\nbob:x:%d:%d::/:/bin/sh\n", me, gid, me+1, gid+1)
	if err := os.WriteFile(f.passwd, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	writeGroupFile(t, f.group, members, extra)
	return f
}

func writeGroupFile(t testing.TB, path, members, extra string) {
	t.Helper()
	gid := os.Getegid()
	group := fmt.Sprintf("own:x:%d:%s\nbobs:x:%d:\n%s", gid, members, gid+1, extra)
	if err := os.WriteFile(path, []byte(group), 0o644); err != nil {
		t.Fatal(err)
	}
}
