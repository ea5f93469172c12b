package fleet

import (
	"strings"
	"testing"
)

// A checkout moved aside, and another made at its path: a server started
// with --repo names the old path in its row and in its arguments, and only
// the root directory's id tells which checkout it serves.
func TestTheRootDirectoryTellsWhichCheckoutAServerServes(t *testing.T) {
	a, b := newServer("author", 101), newServer("review", 102)
	two := roster("author", "review")
	const served, remade = "2049:11", "2049:57" // the directory b serves; the one made at its old path
	here := func(dir string) func(*Row, *Process) {
		return func(r *Row, _ *Process) { r.RepositoryDir = dir }
	}
	at := func(s Snapshot, root Repository) Snapshot {
		s.Repository = root
		return s
	}
	// nonEmpty names the lists besides running and missing that list
	// anything: where a server of another checkout must not show.
	nonEmpty := func(inv Inventory) (lists []string) {
		for name, n := range map[string]int{"duplicate": len(inv.DuplicateMembers), "unexpected": len(inv.UnexpectedMembers),
			"stale": len(inv.StaleMembers), "unregistered": len(inv.UnregisteredProcesses), "mismatched": len(inv.RepositoryBindingMismatches)} {
			if n > 0 {
				lists = append(lists, name)
			}
		}
		return lists
	}
	tests := []struct {
		name        string
		snap        Snapshot
		wantBlocked []string
		check       func(t *testing.T, inv Inventory)
	}{
		{
			name: "the directory it registered is the one at the path: as by the path",
			snap: at(snapshotOf(two, a.with(here(served)), b.with(here(served))), Repository{Root: repo.Root, ID: repo.ID, Dir: served}),
		},
		{
			name:        "at the old path, a live server of the directory moved away is another checkout's: its profile is missing here",
			snap:        at(snapshotOf(two, a.with(here(remade)), b.with(here(served))), Repository{Root: repo.Root, ID: repo.ID, Dir: remade}),
			wantBlocked: []string{MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if len(inv.RunningMembers) != 1 || len(inv.MissingMembers) != 1 || inv.MissingMembers[0].Profile != "review" || len(nonEmpty(inv)) != 0 {
					t.Errorf("running %+v missing %+v listed %v", inv.RunningMembers, inv.MissingMembers, nonEmpty(inv))
				}
			},
		},
		{
			name: "at the old path, a server started there since is its profile's one server; the moved directory's is not a second",
			snap: at(snapshotOf(two, a.with(here(remade)), b.with(here(served)), newServer("review", 104).with(here(remade))),
				Repository{Root: repo.Root, ID: repo.ID, Dir: remade}),
			check: func(t *testing.T, inv Inventory) {
				if !inv.ExactlyOnePerProfile || len(inv.RunningMembers) != 2 || len(nonEmpty(inv)) != 0 {
					t.Errorf("running %+v listed %v", inv.RunningMembers, nonEmpty(inv))
				}
			},
		},
		{
			name:        "where the directory moved, its server is that checkout's, bound wrong (its --repo names the old path)",
			snap:        at(snapshotOf(roster("review"), b.with(here(served))), Repository{Root: "/work/moved", ID: "id-of-moved", Dir: served}),
			wantBlocked: []string{BindingMismatchReason},
			check: func(t *testing.T, inv Inventory) {
				m := inv.RepositoryBindingMismatches
				if len(m) != 1 || m[0].PID != 102 || !strings.Contains(m[0].Detail, `registered for root "`+repo.Root+`"`) {
					t.Errorf("binding mismatches %+v; want 102's, naming the old root", m)
				}
				if len(inv.RunningMembers) != 1 || len(inv.MissingMembers) != 0 {
					t.Errorf("running %+v missing %+v", inv.RunningMembers, inv.MissingMembers)
				}
			},
		},
		{
			name: "a dead server of the directory that was at this path is no stale member here",
			snap: at(snapshotOf(two, a.with(here(remade)), b.with(here(remade))).withRow(newServer("review", 103).with(here(served)).row, PID{Known: true}),
				Repository{Root: repo.Root, ID: repo.ID, Dir: remade}),
			check: func(t *testing.T, inv Inventory) {
				if len(inv.StaleMembers) != 0 {
					t.Errorf("stale %+v", inv.StaleMembers)
				}
			},
		},
		{
			name: "a device numbered again (mounted again) tells nothing of its directories: the path decides, and a second server is a duplicate",
			snap: at(snapshotOf(two, a.with(here("5:1")), b.with(here("7:1")), newServer("author", 104).with(here("7:1"))),
				Repository{Root: repo.Root, ID: repo.ID, Dir: "7:1"}),
			wantBlocked: []string{DuplicateMemberReason},
		},
		{
			name: "where the rows do not know the directory (registered by an older release), the path decides, as before",
			snap: at(snapshotOf(two, a, b), Repository{Root: repo.Root, ID: repo.ID, Dir: remade}),
		},
		{
			name: "where this checkout's directory cannot be told, the path decides, as before",
			snap: snapshotOf(two, a.with(here(served)), b.with(here(remade))),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Classify(tt.snap)
			if got := codes(inv.BlockedReasons); strings.Join(got, ",") != strings.Join(tt.wantBlocked, ",") {
				t.Errorf("blocked %v, want %v (%+v)", got, tt.wantBlocked, inv.BlockedReasons)
			}
			if tt.check != nil {
				tt.check(t, inv)
			}
		})
	}
}

// One directory reached by two paths that are not links (a bind mount):
// the servers registered by one path are this checkout's, asked from the
// other, and bound right; its repository id, the digest of that path, is
// not another checkout's either. The path a checkout moved away from names
// another directory, or none, and its server is still bound wrong.
func TestADirectoryReachedByAnotherPathIsTheSameCheckout(t *testing.T) {
	const dir, remade = "2049:11", "2049:57"
	const mounted = "/mnt/checkout" // where the one directory is also mounted
	registeredThere := func(r *Row, p *Process) {
		r.RepositoryRoot, r.RepositoryID, r.RepositoryDir = repo.Root, repo.ID, dir
		p.StartDir, p.Checkout = repo.Root, repo.Root
	}
	asked := func(s Snapshot, dirs map[string]string) Snapshot {
		s.Repository = Repository{Root: mounted, ID: "id-of-the-mounted-path", Dir: dir}
		s.Dirs = dirs
		return s
	}
	two := roster("author", "review")
	tests := []struct {
		name        string
		snap        Snapshot
		wantBlocked []string
	}{
		{
			name: "the path it registered names this directory too: this checkout, bound right",
			snap: asked(snapshotOf(two, newServer("author", 101).with(registeredThere), newServer("review", 102).with(registeredThere)),
				map[string]string{repo.Root: dir}),
		},
		{
			name: "rows of an earlier release, which know no directory: the path still names this one",
			snap: asked(snapshotOf(two, newServer("author", 101).with(registeredThere).with(func(r *Row, _ *Process) { r.RepositoryDir = "" }),
				newServer("review", 102).with(registeredThere)), map[string]string{repo.Root: dir}),
		},
		{
			name: "an unregistered server started by the other path is this checkout's",
			snap: asked(snapshotOf(two, newServer("author", 101).with(registeredThere), newServer("review", 102).with(registeredThere)).
				withProcess(newServer("review", 103).with(registeredThere).proc), map[string]string{repo.Root: dir}),
			wantBlocked: []string{UnregisteredProcess},
		},
		{
			name: "the checkout moved away from the path it registered, and is gone from there: bound wrong",
			snap: asked(snapshotOf(roster("review"), newServer("review", 102).with(registeredThere)),
				map[string]string{repo.Root: ""}),
			wantBlocked: []string{BindingMismatchReason},
		},
		{
			name: "the checkout moved away, and another was made at the path it registered: bound wrong",
			snap: asked(snapshotOf(roster("review"), newServer("review", 102).with(registeredThere)),
				map[string]string{repo.Root: remade}),
			wantBlocked: []string{BindingMismatchReason},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Classify(tt.snap)
			if got := codes(inv.BlockedReasons); strings.Join(got, ",") != strings.Join(tt.wantBlocked, ",") {
				t.Errorf("blocked %v, want %v (%+v)", got, tt.wantBlocked, inv.BlockedReasons)
			}
		})
	}
}
