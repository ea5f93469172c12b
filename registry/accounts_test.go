package registry

import (
	"fmt"
	"strings"
	"testing"
)

// The rule for a directory its group may write: trusted only when the
// group's one member is the directory's owner (docs/design.md#sharing-heals).
func TestOnlyOwner(t *testing.T) {
	const alice, bob, root = 1000, 1001, 0
	for _, tc := range []struct {
		name  string
		owner int
		group groupMembers
		want  string // in the reason; "" when trusted
	}{
		{"the owner's private group, primary only", alice,
			groupMembers{gid: 1000, name: "alice", primary: []account{{"alice", alice}}}, ""},
		{"the owner's private group, also listed", alice,
			groupMembers{gid: 1000, name: "alice", listed: []account{{"alice", alice}}, primary: []account{{"alice", alice}}}, ""},
		{"a group that lists only the owner", alice,
			groupMembers{gid: 2000, name: "solo", listed: []account{{"alice", alice}}}, ""},
		{"another user listed", alice,
			groupMembers{gid: 1000, name: "alice", listed: []account{{"bob", bob}}, primary: []account{{"alice", alice}}}, `"alice" (gid 1000) has a member other than its owner (uid 1000): bob (uid 1001)`},
		{"another user's primary group too", alice,
			groupMembers{gid: 100, name: "users", primary: []account{{"alice", alice}, {"bob", bob}}}, "bob (uid 1001)"},
		{"the owner's group, but another user's primary one", alice,
			groupMembers{gid: 1000, name: "alice", listed: []account{{"alice", alice}}, primary: []account{{"bob", bob}}}, "bob (uid 1001)"},
		{"a listed name no user has", alice,
			groupMembers{gid: 1000, name: "alice", listed: []account{{"ghost", -1}}, primary: []account{{"alice", alice}}}, `lists "ghost", whom the user database does not know`},
		{"no member at all", alice,
			groupMembers{gid: 50, name: "staff"}, `"staff" (gid 50) has no member`},
		{"a group the database does not have", alice,
			groupMembers{gid: 4242}, "its group (gid 4242) is not in the group database"},
		{"a database that cannot be relied on", alice,
			groupMembers{gid: 1000, name: "alice", primary: []account{{"alice", alice}}, unknown: "/etc/group:3 is a NIS line"}, "is not known: /etc/group:3 is a NIS line"},
		{"root's own group", root,
			groupMembers{gid: 0, name: "root", primary: []account{{"root", root}}}, ""},
		{"root's group under another name for uid 0", root,
			groupMembers{gid: 0, name: "wheel", listed: []account{{"root", root}}, primary: []account{{"root", root}, {"toor", root}}}, ""},
		{"root's group with operator in it", root,
			groupMembers{gid: 0, name: "root", primary: []account{{"root", root}, {"operator", 11}}}, "operator (uid 11)"},
		{"root listed in a user's private group", alice,
			groupMembers{gid: 1000, name: "alice", listed: []account{{"root", root}}, primary: []account{{"alice", alice}}}, "root (uid 0)"},
	} {
		err := onlyOwner(tc.owner, tc.group)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: not trusted: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want a reason with %q", tc.name, err, tc.want)
		}
	}
}

// What the files say of a group: its listed members by uid, the users
// whose primary group it is; a line that cannot be read, or a NIS line,
// makes nothing known.
func TestParseAccounts(t *testing.T) {
	const passwd = "root:x:0:0:root:/root:/bin/bash\n" +
		"# a comment\n\n" +
		"alice:x:1000:1000:Alice:/home/alice:/bin/bash\n" +
		"bob:x:1001:100:Bob:/home/bob:/bin/bash\n" +
		"carol:x:1002:100::/home/carol:/bin/sh\n"
	const group = "root:x:0:\n" +
		"users:x:100:dave\n" +
		"alice:x:1000:\n" +
		"dev:x:2000:alice, bob\n" +
		"dev:x:2000:carol\n"
	a := parseAccounts("group", strings.NewReader(group), "passwd", strings.NewReader(passwd))
	if a.unknown != "" {
		t.Fatalf("unknown: %s", a.unknown)
	}
	for gid, want := range map[int]string{
		0:    `root; listed []; primary [{root 0}]`,
		100:  `users; listed [{dave -1}]; primary [{bob 1001} {carol 1002}]`,
		1000: `alice; listed []; primary [{alice 1000}]`,
		2000: `dev; listed [{alice 1000} {bob 1001} {carol 1002}]; primary []`,
		3000: `; listed []; primary []`,
	} {
		g := a.members(gid)
		if got := describeMembers(g); got != want {
			t.Errorf("gid %d: %s, want %s", gid, got, want)
		}
	}
	for _, tc := range []struct{ name, group, passwd, want string }{
		{"a NIS line in group", group + "+:::\n", passwd, "group:6 is a NIS line"},
		{"a NIS line in passwd", group, "+@staff::::::\n" + passwd, "passwd:1 is a NIS line"},
		{"an excluding NIS line", group, passwd + "-bob\n", "passwd:7 is a NIS line"},
		{"a group line with a field missing", "users:x:100\n", passwd, "group:1 cannot be read (3 fields)"},
		{"a group line with a bad gid", "users:x:one:\n", passwd, `group:1 cannot be read (gid "one")`},
		{"a passwd line with a bad uid", group, "alice:x:-5:1000::/:/bin/sh\n", `passwd:1 cannot be read (uid "-5")`},
	} {
		a := parseAccounts("group", strings.NewReader(tc.group), "passwd", strings.NewReader(tc.passwd))
		if !strings.Contains(a.unknown, tc.want) {
			t.Errorf("%s: unknown = %q, want %q", tc.name, a.unknown, tc.want)
		}
		if err := onlyOwner(1000, a.members(1000)); err == nil {
			t.Errorf("%s: a database that cannot be relied on trusted a group", tc.name)
		}
	}
}

func describeMembers(g groupMembers) string {
	return fmt.Sprintf("%s; listed %v; primary %v", g.name, g.listed, g.primary)
}
