package registry

import (
	"path/filepath"
	"slices"
	"testing"
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

func TestWriterAmong(t *testing.T) {
	const me, system, admins, everyone, users = "S-1-5-21-1-2-3-1001", "S-1-5-18", "S-1-5-32-544", "S-1-1-0", "S-1-5-32-545"
	const read, modify, fullControl = 0x120089, 0x1301bf, 0x1f01ff
	trusted := []string{me, system, admins}
	for _, tc := range []struct {
		name    string
		entries []accessEntry
		want    string
	}{
		{"private", []accessEntry{{true, false, fullControl, me}, {true, false, fullControl, system}, {true, false, fullControl, admins}}, ""},
		{"others may read", []accessEntry{{true, false, fullControl, me}, {true, false, read, users}}, ""},
		{"others may modify", []accessEntry{{true, false, fullControl, me}, {true, false, modify, users}}, users},
		{"everyone may write data", []accessEntry{{true, false, 0x2, everyone}}, everyone},
		{"denied, not granted", []accessEntry{{false, false, fullControl, everyone}}, ""},
		{"only for what is created inside", []accessEntry{{true, true, fullControl, everyone}}, ""},
		{"generic write", []accessEntry{{true, false, 0x40000000, users}}, users},
	} {
		if got := writerAmong(tc.entries, trusted...); got != tc.want {
			t.Errorf("%s: writerAmong = %q, want %q", tc.name, got, tc.want)
		}
	}
}
