package registry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
)

func TestLinkFreePath(t *testing.T) {
	root := filepath.Join(string(filepath.Separator)+"work", "repo")
	for _, tc := range []struct {
		dir   string
		top   string
		names []string
	}{
		{Dir(root), filepath.Join(root, ".ai"), []string{"local", "state", "mcp"}},
		{Dir(root) + string(filepath.Separator), filepath.Join(root, ".ai"), []string{"local", "state", "mcp"}},
		{filepath.Join(root, "elsewhere", "local", "state", "mcp"), filepath.Join(root, "elsewhere", "local", "state"), []string{"mcp"}},
		{filepath.Join(root, "leases"), root, []string{"leases"}},
	} {
		top, names := linkFreePath(tc.dir)
		if top != tc.top || !slices.Equal(names, tc.names) {
			t.Errorf("linkFreePath(%q) = %q %q, want %q %q", tc.dir, top, names, tc.top, tc.names)
		}
	}
}

func TestWritersAmong(t *testing.T) {
	const me, system, admins, everyone, users = "S-1-5-21-1-2-3-1001", "S-1-5-18", "S-1-5-32-544", "S-1-1-0", "S-1-5-32-545"
	const read, modify, fullControl = 0x120089, 0x1301bf, 0x1f01ff
	trusted := []string{me, system, admins}
	for _, tc := range []struct {
		name    string
		entries []accessEntry
		want    []string
	}{
		{"private", []accessEntry{{true, false, false, fullControl, me}, {true, false, false, fullControl, system}, {true, false, false, fullControl, admins}}, nil},
		{"others may read", []accessEntry{{true, false, false, fullControl, me}, {true, false, false, read, users}}, nil},
		{"others may modify", []accessEntry{{true, false, false, fullControl, me}, {true, false, false, modify, users}}, []string{users}},
		{"everyone may write data", []accessEntry{{true, false, false, 0x2, everyone}}, []string{everyone}},
		{"denied, not granted", []accessEntry{{false, false, false, fullControl, everyone}}, nil},
		{"only for the directories created inside", []accessEntry{{true, true, false, fullControl, everyone}}, nil},
		{"only for the files created inside", []accessEntry{{true, true, true, fullControl, everyone}}, []string{everyone}},
		{"generic write", []accessEntry{{true, false, false, 0x40000000, users}}, []string{users}},
		{"every writer, each once", []accessEntry{{true, false, false, modify, users}, {true, false, false, fullControl, me}, {true, false, false, 0x2, everyone}, {true, false, false, 0x4, users}}, []string{users, everyone}},
	} {
		if got := writersAmong(tc.entries, trusted...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: writersAmong = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Who may read a lease directory's files, the lease's secret among them:
// the rule writersAmong's is, for reading.
func TestReadersAmong(t *testing.T) {
	const me, system, admins, users, creatorOwner = "S-1-5-21-1-2-3-1001", "S-1-5-18", "S-1-5-32-544", "S-1-5-32-545", "S-1-3-0"
	const read, fullControl, traverse = 0x120089, 0x1f01ff, 0x20
	trusted := []string{me, system, admins, creatorOwner}
	for _, tc := range []struct {
		name    string
		entries []accessEntry
		want    []string
	}{
		{"private", []accessEntry{{true, false, true, fullControl, me}, {true, false, true, fullControl, system}, {true, false, true, fullControl, admins}}, nil},
		{"others may read", []accessEntry{{true, false, true, fullControl, me}, {true, false, true, read, users}}, []string{users}},
		{"others may read the files created inside", []accessEntry{{true, true, true, read, users}}, []string{users}},
		{"others may read only the directories created inside", []accessEntry{{true, true, false, read, users}}, nil},
		{"others may only pass through", []accessEntry{{true, false, true, traverse, users}}, nil},
		{"generic read", []accessEntry{{true, false, false, 0x80000000, users}}, []string{users}},
		{"the maker of what is created inside", []accessEntry{{true, true, true, fullControl, creatorOwner}}, nil},
		{"denied, not granted", []accessEntry{{false, false, true, read, users}}, nil},
	} {
		if got := readersAmong(tc.entries, trusted...); !slices.Equal(got, tc.want) {
			t.Errorf("%s: readersAmong = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A directory on the way to the lease: its owner this user or root,
// nobody else may write it unless it is sticky, and its group only when
// that group is its owner's alone (as groups says).
func TestOnTheWay(t *testing.T) {
	const me, bob = 1000, 1001
	alone := func(gid, owner int) error { return nil }
	shared := func(gid, owner int) error { return errors.New("its group has another member") }
	for _, tc := range []struct {
		name   string
		dir    owned
		groups ownerOnly
		want   string // in the reason; "" when trusted
	}{
		{"private", owned{me, 1000, 0o755, nil}, shared, ""},
		{"the owner's group may write", owned{me, 1000, 0o775, nil}, alone, ""},
		{"a shared group may write", owned{me, 100, 0o775, nil}, shared, "is writable by other users (mode -rwxrwxr-x): its group has another member; chmod g-w /src makes it private"},
		{"root's, its group root's alone", owned{0, 0, 0o775, nil}, alone, ""},
		{"root's, a shared group", owned{0, 0, 0o775, nil}, shared, "chmod g-w /src"},
		{"anybody may write", owned{me, 1000, 0o777, nil}, alone, "is writable by other users (mode -rwxrwxrwx); chmod o-w /src removes that"},
		{"sticky", owned{0, 0, 0o777 | fs.ModeSticky, nil}, shared, ""},
		{"another user's", owned{bob, 1000, 0o755, nil}, alone, "belongs to another user (uid 1001"},
		{"an ACL lets others write", owned{me, 1000, 0o775, []string{"user 1001", "group 100"}}, alone, "is writable by other users through its ACL (user 1001, group 100): setfacl -b /src removes it"},
	} {
		err := onTheWay("/src", tc.dir, me, tc.groups)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: not trusted: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "/src, on the way to the lease, ") || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want a reason with %q", tc.name, err, tc.want)
		}
	}
}

// Acquire makes the lease directory below a checkout's .ai, never the
// checkout nor its .ai: one moved or removed while it was served is not
// made again at its old path, in the way of the one moved back.
func TestAcquireNeverMakesAGoneCheckout(t *testing.T) {
	moved := filepath.Join(testtemp.Dir(t), "moved")
	layerMoved := testtemp.Dir(t)
	for root, said := range map[string]string{moved: "the checkout is gone from " + moved, layerMoved: filepath.Join(layerMoved, ".ai") + " is gone"} {
		gone := filepath.Join(root, ".ai")
		err := (&LeaseFile{Path: Path(root, "")}).Acquire(newLease(t))
		if err == nil || !strings.Contains(err.Error(), said) {
			t.Fatalf("Acquire under a gone checkout: %v", err)
		}
		if _, err := os.Lstat(gone); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the gone checkout was made again: %v", err)
		}
	}
}
