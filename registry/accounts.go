package registry

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// A directory its group may write is as safe as a private one when that
// group has exactly one member, the directory's owner: a user-private
// group, as Debian, Ubuntu and Fedora give every user, so that `git clone`
// under their umask 002 makes directories of mode 0775
// (docs/design.md#sharing-heals). This is Debian OpenSSH's rule for ~/.ssh
// (secure_permissions, its user-group-modes patch); what the group's
// members are comes from the user and group databases, read here from their
// files (passwd, group).

// account is one user, as the rule sees it.
type account struct {
	name string
	uid  int // -1 when no user of the passwd database has that name
}

// groupMembers is what the user and group databases say of one group.
type groupMembers struct {
	gid     int
	name    string    // "" when the group database has no such group
	listed  []account // the members its line lists
	primary []account // the users whose primary group it is
	unknown string    // why the databases cannot say who its members are, or ""
}

// onlyOwner says why the group g may have a member other than the user
// owner, or nil when owner is its only member: the group is known, it
// lists no one but owner, and no user but owner has it as primary group
// (the owner's own primary group counts as the owner only). A member is
// the owner by uid, so another name for the same uid (BSD's toor for
// root) is the owner too. A group with no member at all is not a user's
// own (setgid programs use such groups), and not trusted either.
func onlyOwner(owner int, g groupMembers) error {
	label := groupLabel(g)
	switch {
	case g.unknown != "":
		return fmt.Errorf("who may write through its group %s is not known: %s", label, g.unknown)
	case g.name == "":
		return fmt.Errorf("its group %s is not in the group database", label)
	}
	for _, a := range slices.Concat(g.listed, g.primary) {
		switch {
		case a.uid < 0:
			return fmt.Errorf("its group %s lists %q, whom the user database does not know", label, a.name)
		case a.uid != owner:
			return fmt.Errorf("its group %s has a member other than its owner (uid %d): %s (uid %d)", label, owner, a.name, a.uid)
		}
	}
	if len(g.listed)+len(g.primary) == 0 {
		return fmt.Errorf("its group %s has no member, so it is not its owner's own group", label)
	}
	return nil
}

// groupLabel names a group as a reason says it.
func groupLabel(g groupMembers) string {
	if g.name == "" {
		return fmt.Sprintf("(gid %d)", g.gid)
	}
	return fmt.Sprintf("%q (gid %d)", g.name, g.gid)
}

// accounts is what the rule needs of the passwd and group databases.
type accounts struct {
	unknown string            // why the files cannot be relied on, or ""
	groups  map[int]groupLine // by gid
	uids    map[string]int    // user name → uid
	primary map[int][]account // gid → the users whose primary group it is
}

// groupLine is a group's name and the members it lists (merged, when the
// file has more than one line for its gid).
type groupLine struct {
	name    string
	members []string
}

// members says what the databases say of the group gid.
func (a *accounts) members(gid int) groupMembers {
	g := groupMembers{gid: gid, unknown: a.unknown}
	line, ok := a.groups[gid]
	if !ok {
		return g
	}
	g.name = line.name
	for _, name := range line.members {
		uid, known := a.uids[name]
		if !known {
			uid = -1
		}
		g.listed = append(g.listed, account{name, uid})
	}
	g.primary = a.primary[gid]
	return g
}

// parseAccounts reads a group file and a passwd file (named, for the
// reasons it gives, groupName and passwdName). A line it cannot read, or
// a NIS line (+… or -…, whose entries live elsewhere), makes the whole
// database unknown: a member it cannot see could write.
func parseAccounts(groupName string, group io.Reader, passwdName string, passwd io.Reader) *accounts {
	a := &accounts{groups: map[int]groupLine{}, uids: map[string]int{}, primary: map[int][]account{}}
	fail := func(why string) { a.unknown = cmp.Or(a.unknown, why) }
	eachLine(passwdName, passwd, fail, func(fields []string) error {
		if len(fields) < 4 {
			return fmt.Errorf("%d fields", len(fields))
		}
		uid, err := strconv.Atoi(fields[2])
		if err != nil || uid < 0 {
			return fmt.Errorf("uid %q", fields[2])
		}
		gid, err := strconv.Atoi(fields[3])
		if err != nil || gid < 0 {
			return fmt.Errorf("gid %q", fields[3])
		}
		if _, seen := a.uids[fields[0]]; !seen {
			a.uids[fields[0]] = uid
		}
		a.primary[gid] = append(a.primary[gid], account{fields[0], uid})
		return nil
	})
	eachLine(groupName, group, fail, func(fields []string) error {
		if len(fields) != 4 {
			return fmt.Errorf("%d fields", len(fields))
		}
		gid, err := strconv.Atoi(fields[2])
		if err != nil || gid < 0 {
			return fmt.Errorf("gid %q", fields[2])
		}
		line, seen := a.groups[gid]
		if !seen {
			line.name = fields[0]
		}
		for m := range strings.SplitSeq(fields[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				line.members = append(line.members, m)
			}
		}
		a.groups[gid] = line
		return nil
	})
	return a
}

// eachLine calls parse with the colon-separated fields of every line of r
// but blank ones and comments; what it cannot read goes to fail, with the
// file's name and the line's number.
func eachLine(name string, r io.Reader, fail func(string), parse func([]string) error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#':
			continue
		case line[0] == '+' || line[0] == '-':
			fail(fmt.Sprintf("%s:%d is a NIS line, whose entries are not read here", name, n))
			continue
		}
		if err := parse(strings.Split(line, ":")); err != nil {
			fail(fmt.Sprintf("%s:%d cannot be read (%v)", name, n, err))
		}
	}
	if err := sc.Err(); err != nil {
		fail(fmt.Sprintf("reading %s: %v", name, err))
	}
}
