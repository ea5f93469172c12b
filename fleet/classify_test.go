package fleet

import (
	"fmt"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	a, b, c := newServer("author", 101), newServer("review", 102), newServer("merge", 103)
	three := roster("author", "merge", "review")
	five := roster("author", "control", "merge", "reconcile", "review")
	fiveServers := []server{a, b, c, newServer("control", 104), newServer("reconcile", 105)}
	noCohort := func(r *Row, _ *Process) { r.Cohort, r.CohortSource = "", "unknown" }
	// b won the lease again, its older, lease-lost server still serving
	// at url, where the process listens on listen.
	drainingBeside := func(listen, url string) Snapshot {
		return snapshotOf(three, a, b.with(func(_ *Row, p *Process) { p.Listen = append(p.Listen, listen) }), c).withRow(b.with(func(r *Row, _ *Process) {
			r.RuntimeID, r.RegisteredTicks, r.State, r.URL = "rt-older", r.RegisteredTicks-1, StateLeaseLost, url
		}).row, PID{Known: true, Exists: true, Start: b.row.ProcessStart})
	}
	oneDraining := func(t *testing.T, inv Inventory) {
		if len(inv.DrainingMembers) != 1 || inv.DrainingMembers[0].RuntimeID != "rt-older" || len(inv.StaleMembers) != 0 ||
			len(inv.RunningMembers) != 3 || !inv.ExactlyOnePerProfile {
			t.Errorf("draining %+v stale %+v running %+v", inv.DrainingMembers, inv.StaleMembers, inv.RunningMembers)
		}
	}

	tests := []struct {
		name         string
		snap         Snapshot
		wantComplete bool
		wantBlocked  []string // codes, in order; empty = the gate is open
		check        func(t *testing.T, inv Inventory)
	}{
		{
			name: "every configured profile runs once, one cohort: the gate is open",
			snap: snapshotOf(three, a, b, c), wantComplete: true,
			check: func(t *testing.T, inv Inventory) {
				if got := pidsOf(inv.RunningMembers); !reflect.DeepEqual(got, []int{101, 103, 102}) {
					t.Errorf("running members (sorted by profile) %v", got)
				}
				if !inv.ExactlyOnePerProfile || strOf(inv.SingleCohort) != "true" || strOf(inv.MixedCohort) != "false" ||
					strOf(inv.MixedRevision) != "false" || inv.BlockedReason != nil {
					t.Errorf("verdict %+v", inv)
				}
				for _, cm := range inv.ConfiguredMembers {
					if cm.State != "running" || cm.Instances != 1 {
						t.Errorf("configured member %+v", cm)
					}
				}
				if !reflect.DeepEqual(inv.StartupRevisions, []string{"0.1.0+abcdef"}) || !reflect.DeepEqual(inv.Cohorts, []string{"env:cohort-1"}) {
					t.Errorf("revisions %v cohorts %v", inv.StartupRevisions, inv.Cohorts)
				}
			},
		},
		{
			name: "a configured profile with no server is missing, never running",
			snap: snapshotOf(three, a, c), wantComplete: true, wantBlocked: []string{MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if len(inv.MissingMembers) != 1 || inv.MissingMembers[0].Profile != "review" || inv.ExactlyOnePerProfile {
					t.Errorf("missing %+v", inv.MissingMembers)
				}
			},
		},
		{
			name: "two live servers of one profile are a duplicate, every pid listed",
			snap: snapshotOf(three, a, b, c, newServer("review", 110)), wantComplete: true, wantBlocked: []string{DuplicateMemberReason},
			check: func(t *testing.T, inv Inventory) {
				d := inv.DuplicateMembers
				if len(d) != 1 || d[0].Profile != "review" || !reflect.DeepEqual(d[0].PIDs, []int{102, 110}) || d[0].Instances != 2 {
					t.Errorf("duplicates %+v", d)
				}
				if inv.ExactlyOnePerProfile {
					t.Error("exactly one per profile with a duplicate")
				}
			},
		},
		{
			name: "a profile outside the roster is unexpected, never folded into duplicates",
			snap: snapshotOf(three, a, b, c, newServer("extra", 120)), wantComplete: true, wantBlocked: []string{UnexpectedMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if got := pidsOf(inv.UnexpectedMembers); !reflect.DeepEqual(got, []int{120}) || len(inv.DuplicateMembers) != 0 || !inv.ExactlyOnePerProfile {
					t.Errorf("unexpected %v duplicates %+v", got, inv.DuplicateMembers)
				}
			},
		},
		{
			name: "a row whose pid is dead is stale, and its profile missing",
			snap: snapshotOf(three, a, c).withRow(b.row, PID{Known: true}), wantComplete: true, wantBlocked: []string{MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				wantStale(t, inv, 102, StaleDead)
			},
		},
		{
			name: "a recycled pid (a live unrelated process, another start time) never passes for the server",
			snap: snapshotOf(three, a, c).withRow(b.row, PID{Known: true, Exists: true, Start: 999}), wantComplete: true, wantBlocked: []string{MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				wantStale(t, inv, 102, StaleRecycled)
			},
		},
		{
			name: "a recycled pid now held by another majordomus-mcp server: stale row, unregistered process",
			snap: snapshotOf(three, a, c).withRow(b.row, PID{Known: true, Exists: true, Start: 5555}).
				withProcess(b.with(func(_ *Row, p *Process) { p.Start = 5555 }).proc),
			wantBlocked: []string{UnregisteredProcess, MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				wantStale(t, inv, 102, StaleRecycled)
			},
		},
		{
			name:        "a process that started after the row was registered is not its server",
			snap:        snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.RegisteredTicks = r.ProcessStart - 1 }), c),
			wantBlocked: []string{UnregisteredProcess, MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				wantStale(t, inv, 102, StaleRecycled)
			},
		},
		{
			name:        "a server with no row is unregistered: the inventory is incomplete",
			snap:        snapshotOf(three, a, b, c).withProcess(newServer("review", 130).proc),
			wantBlocked: []string{UnregisteredProcess},
			check: func(t *testing.T, inv Inventory) {
				u := inv.UnregisteredProcesses
				if len(u) != 1 || u[0].PID != 130 || u[0].Checkout == nil || *u[0].Checkout != repo.Root {
					t.Errorf("unregistered %+v", u)
				}
			},
		},
		{
			name: "a server of another checkout, or started outside this one, is not this fleet's",
			snap: snapshotOf(three, a, b, c).
				withProcess(Process{PID: 140, Start: 1, Checkout: "/elsewhere", StartDir: "/elsewhere/sub"}).
				withProcess(Process{PID: 141, Start: 1, StartDir: "/gone/checkout"}).
				withRow(newServer("author", 142).with(func(r *Row, _ *Process) { r.RepositoryID, r.RepositoryRoot = "other", "/other" }).row, PID{Known: true}),
			wantComplete: true,
			check: func(t *testing.T, inv Inventory) {
				if inv.ProcessesOfOtherCheckouts != 2 || len(inv.StaleMembers) != 0 {
					t.Errorf("other checkouts %d, stale %+v", inv.ProcessesOfOtherCheckouts, inv.StaleMembers)
				}
			},
		},
		{
			// 140 runs registered for /elsewhere, 141 with no row: both
			// are observed, neither is this fleet's
			name: "a registered live server of another checkout counts among the processes of other checkouts",
			snap: snapshotOf(three, a, b, c, newServer("author", 140).with(func(r *Row, p *Process) {
				r.RepositoryRoot, r.RepositoryID, p.StartDir, p.Checkout = "/elsewhere", "id-of-elsewhere", "/elsewhere", "/elsewhere"
			})).withProcess(Process{PID: 141, Start: 1, Checkout: "/elsewhere", StartDir: "/elsewhere"}),
			wantComplete: true,
			check: func(t *testing.T, inv Inventory) {
				if inv.ProcessesObserved != 5 || inv.ProcessesOfOtherCheckouts != 2 || len(inv.RunningMembers) != 3 {
					t.Errorf("observed %d, of other checkouts %d, running %v", inv.ProcessesObserved, inv.ProcessesOfOtherCheckouts, pidsOf(inv.RunningMembers))
				}
			},
		},
		{
			name:        "a server whose start directory cannot be told counts as this checkout's",
			snap:        snapshotOf(three, a, b, c).withProcess(Process{PID: 150, Start: 1}),
			wantBlocked: []string{UnregisteredProcess},
		},
		{
			name:         "a live member bound to another root is a repository binding mismatch",
			snap:         snapshotOf(three, a, b.with(func(r *Row, p *Process) { r.RepositoryRoot = "/moved"; p.Checkout = "/moved" }), c),
			wantComplete: true, wantBlocked: []string{BindingMismatchReason},
			check: func(t *testing.T, inv Inventory) {
				m := inv.RepositoryBindingMismatches
				if len(m) != 1 || m[0].PID != 102 || m[0].Detail == "" || len(inv.RunningMembers) != 3 {
					t.Errorf("binding mismatches %+v", m)
				}
			},
		},
		{
			name:         "a live server registered under the checkout's old path (it moved) is a repository binding mismatch",
			snap:         snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.RepositoryRoot, r.RepositoryID = "/old/checkout", "id-of-old" }), c),
			wantComplete: true, wantBlocked: []string{BindingMismatchReason},
			check: func(t *testing.T, inv Inventory) {
				if m := inv.RepositoryBindingMismatches; len(m) != 1 || m[0].PID != 102 || inv.ProcessesOfOtherCheckouts != 0 {
					t.Errorf("binding mismatches %+v, processes of other checkouts %d", m, inv.ProcessesOfOtherCheckouts)
				}
			},
		},
		{
			name: "a live server of a checkout holding this one, started in it, is another checkout's",
			snap: snapshotOf(three, a, b, c, newServer("author", 106).with(func(r *Row, _ *Process) {
				r.RepositoryRoot, r.RepositoryID = path.Dir(repo.Root), "id-of-parent" // the fixture's paths are slashed on every system
			})),
			wantComplete: true,
			check: func(t *testing.T, inv Inventory) {
				if len(inv.RepositoryBindingMismatches) != 0 || len(inv.RunningMembers) != 3 {
					t.Errorf("binding mismatches %+v, running %+v", inv.RepositoryBindingMismatches, inv.RunningMembers)
				}
			},
		},
		{
			name: "a live member whose role contradicts the roster is a role mismatch",
			snap: snapshotOf([]Configured{{"author", "writer", true}, {"merge", "", true}, {"review", "", true}},
				a.with(func(r *Row, _ *Process) { r.Role = "reviewer" }), b, c),
			wantComplete: true, wantBlocked: []string{RoleMismatchReason},
			check: func(t *testing.T, inv Inventory) {
				if m := inv.RoleMismatches; len(m) != 1 || m[0].PID != 101 {
					t.Errorf("role mismatches %+v", m)
				}
			},
		},
		{
			name:         "a roster without roles checks none",
			snap:         snapshotOf([]Configured{{Profile: "author"}}, a.with(func(r *Row, _ *Process) { r.Role = "anything" })),
			wantComplete: true,
		},
		{
			name:        "five members at one revision with an unknown cohort: single_cohort null, gate closed",
			snap:        snapshotOf(five, withAll(fiveServers, noCohort)...),
			wantBlocked: []string{CohortUnknown},
			check: func(t *testing.T, inv Inventory) {
				if inv.SingleCohort != nil || inv.MixedCohort != nil || strOf(inv.MixedRevision) != "false" || len(inv.RunningMembers) != 5 {
					t.Errorf("single %s mixed %s revision %s", strOf(inv.SingleCohort), strOf(inv.MixedCohort), strOf(inv.MixedRevision))
				}
			},
		},
		{
			name: "two known cohorts are mixed",
			// a cohort is its client's words: quoted, ", env:x" in it is no second one
			snap:         snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.Cohort = "env:cohort-2, env:x" }), c),
			wantComplete: true, wantBlocked: []string{MixedCohortReason},
			check: func(t *testing.T, inv Inventory) {
				if strOf(inv.SingleCohort) != "false" || strOf(inv.MixedCohort) != "true" || len(inv.Cohorts) != 2 {
					t.Errorf("single %s mixed %s cohorts %v", strOf(inv.SingleCohort), strOf(inv.MixedCohort), inv.Cohorts)
				}
				why := inv.BlockedReasons[len(inv.BlockedReasons)-1].Detail
				if want := fmt.Sprintf("cohorts %q, %q", inv.Cohorts[0], inv.Cohorts[1]); !strings.HasSuffix(why, want) {
					t.Errorf("the mixed cohorts are said as %q; want it to end %q", why, want)
				}
			},
		},
		{
			name: "a cohort from a parent that is still the parent is known",
			snap: snapshotOf(roster("author"), a.with(func(r *Row, _ *Process) {
				r.Cohort, r.CohortSource, r.ParentPID, r.ParentStart = "parent:900@77", CohortFromParent, 900, 77
			})),
			wantComplete: true,
		},
		{
			name: "a cohort from a parent that has gone (the process was reparented) is unknown",
			snap: snapshotOf(roster("author"), a.with(func(r *Row, p *Process) {
				r.Cohort, r.CohortSource, r.ParentPID, r.ParentStart = "parent:900@77", CohortFromParent, 900, 77
				p.PPID = 1
			})),
			wantBlocked: []string{CohortUnknown},
		},
		{
			name:         "mixed revisions",
			snap:         snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.StartupRevision = "0.1.0+fedcba" }), c),
			wantComplete: true, wantBlocked: []string{MixedRevisionReason},
			check: func(t *testing.T, inv Inventory) {
				if strOf(inv.MixedRevision) != "true" || len(inv.StartupRevisions) != 2 {
					t.Errorf("mixed %s revisions %v", strOf(inv.MixedRevision), inv.StartupRevisions)
				}
			},
		},
		{
			name:        "an unknown revision makes the inventory incomplete",
			snap:        snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.StartupRevision = "" }), c),
			wantBlocked: []string{RevisionUnknown},
			check: func(t *testing.T, inv Inventory) {
				if inv.MixedRevision != nil {
					t.Errorf("mixed revision %s with an unknown one", strOf(inv.MixedRevision))
				}
			},
		},
		{
			name:         "a lease-lost server still serving is draining: neither a duplicate nor running",
			snap:         snapshotOf(three, a, b, c, newServer("review", 160).with(func(r *Row, _ *Process) { r.State = StateLeaseLost })),
			wantComplete: true, wantBlocked: []string{DrainingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if len(inv.DrainingMembers) != 1 || inv.DrainingMembers[0].PID != 160 || len(inv.DuplicateMembers) != 0 || !inv.ExactlyOnePerProfile {
					t.Errorf("draining %+v duplicates %+v", inv.DrainingMembers, inv.DuplicateMembers)
				}
				if inv.ConfiguredMembers[2].Draining != 1 {
					t.Errorf("configured %+v", inv.ConfiguredMembers[2])
				}
			},
		},
		{
			name: "an unreadable registry: incomplete, with its own reason, and every server unregistered",
			snap: func() Snapshot {
				s := snapshotOf(three, a, b, c)
				s.Rows, s.RegistryError = nil, "reading the registry: permission denied"
				return s
			}(),
			wantBlocked: []string{RegistryUnreadable, UnregisteredProcess, MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if inv.IncompleteReasons[0].Detail != "reading the registry: permission denied" {
					t.Errorf("reason %+v", inv.IncompleteReasons[0])
				}
			},
		},
		{
			name: "no process listing: incomplete, and no row counts as running",
			snap: func() Snapshot {
				s := snapshotOf(three, a, b, c)
				s.Processes, s.ObservationError = nil, "process listing unavailable: /proc/net/tcp: permission denied"
				return s
			}(),
			wantBlocked: []string{ProcessListingUnavailable, RegisteredProcessUnobserved, MissingMemberReason},
			check:       func(t *testing.T, inv Inventory) { wantStale(t, inv, 101, StaleUnverifiable) },
		},
		{
			name:        "a registered process that runs but does not serve is unobserved: incomplete",
			snap:        snapshotOf(three, a, c).withRow(b.row, PID{Known: true, Exists: true, Start: b.row.ProcessStart}),
			wantBlocked: []string{RegisteredProcessUnobserved, MissingMemberReason},
			check:       func(t *testing.T, inv Inventory) { wantStale(t, inv, 102, StaleUnobserved) },
		},
		{
			name:         "a row from another boot is stale",
			snap:         snapshotOf(three, a, b, c).withRow(newServer("review", 170).with(func(r *Row, _ *Process) { r.BootID = "boot-0" }).row, PID{Known: true}),
			wantComplete: true,
			check:        func(t *testing.T, inv Inventory) { wantStale(t, inv, 170, StaleAnotherBoot) },
		},
		{
			name:         "a process that registered twice is one member; the older row is replaced",
			snap:         snapshotOf(three, a, b, c).withRow(b.with(func(r *Row, _ *Process) { r.RuntimeID, r.RegisteredTicks = "rt-older", r.RegisteredTicks-1 }).row, PID{Known: true, Exists: true, Start: b.row.ProcessStart}),
			wantComplete: true,
			check:        func(t *testing.T, inv Inventory) { wantStale(t, inv, 102, StaleReplaced) },
		},
		{
			name:         "a process that won the lease again beside its draining server is running and draining",
			snap:         drainingBeside("127.0.0.1:49999", "http://127.0.0.1:49999"),
			wantComplete: true, wantBlocked: []string{DrainingMemberReason}, check: oneDraining,
		},
		{
			// --http-host 0.0.0.0 or ::, whose URL names loopback
			name:         "a draining server bound to every address is draining",
			snap:         drainingBeside("[::]:49999", "http://[::1]:49999"),
			wantComplete: true, wantBlocked: []string{DrainingMemberReason}, check: oneDraining,
		},
		{
			name: "a lease-lost row a process left behind, where it no longer listens, is replaced",
			snap: snapshotOf(three, a, b, c).withRow(b.with(func(r *Row, _ *Process) {
				r.RuntimeID, r.RegisteredTicks, r.State, r.URL = "rt-older", r.RegisteredTicks-1, StateLeaseLost, "http://127.0.0.1:49999"
			}).row, PID{Known: true, Exists: true, Start: b.row.ProcessStart}),
			wantComplete: true,
			check:        func(t *testing.T, inv Inventory) { wantStale(t, inv, 102, StaleReplaced) },
		},
		{
			// the roster stands for what a manifest that could not be read
			// would give: unexpected, missing or another role it cannot say
			name: "an unreadable roster: every live server runs, none is judged against it",
			snap: func() Snapshot {
				s := snapshotOf(roster("default"), a, b.with(func(r *Row, _ *Process) { r.Role = "reviewer" }), newServer("review", 110))
				s.RosterError = "the manifest is not valid"
				return s
			}(),
			wantBlocked: []string{RosterUnreadable, DuplicateMemberReason}, // two of one profile, whatever the roster
			check: func(t *testing.T, inv Inventory) {
				if got := pidsOf(inv.RunningMembers); !reflect.DeepEqual(got, []int{101, 102, 110}) || len(inv.UnexpectedMembers)+len(inv.MissingMembers)+len(inv.RoleMismatches)+len(inv.ConfiguredMembers) != 0 {
					t.Errorf("running %v, unexpected %+v, missing %+v, role mismatches %+v, configured %+v", got, inv.UnexpectedMembers, inv.MissingMembers, inv.RoleMismatches, inv.ConfiguredMembers)
				}
				if len(inv.DuplicateMembers) != 1 || !reflect.DeepEqual(inv.DuplicateMembers[0].PIDs, []int{102, 110}) {
					t.Errorf("duplicates %+v", inv.DuplicateMembers)
				}
			},
		},
		{
			name:        "an empty roster cannot be satisfied",
			snap:        snapshotOf(nil),
			wantBlocked: []string{RosterUnreadable},
		},
		{
			name:        "a stopped server is still its profile's member, but the inventory is incomplete",
			snap:        snapshotOf(three, a, b.with(func(_ *Row, p *Process) { p.Stopped = true }), c),
			wantBlocked: []string{ProcessStopped},
			check: func(t *testing.T, inv Inventory) {
				if len(inv.RunningMembers) != 3 || !inv.ExactlyOnePerProfile ||
					inv.IncompleteReasons[0].Detail != "servers stopped (by a signal or a debugger), which answer nothing until continued: review (pid 102)" {
					t.Errorf("running %v, reasons %+v", pidsOf(inv.RunningMembers), inv.IncompleteReasons)
				}
			},
		},
		{
			// b registered from a container's pid namespace: the pid it
			// recorded names, here, a process of this checkout that is
			// not b, which is therefore unregistered, and b's row stale as
			// unverifiable (signal 0 says that pid runs as recorded).
			name: "a row of another pid namespace is never judged by its pid here",
			snap: func() Snapshot {
				s := snapshotOf(three, a, b.with(func(r *Row, _ *Process) { r.PIDNamespace = "pid:[4026532201]" }), c)
				s.PIDNamespace = "pid:[4026531836]"
				return s
			}(),
			wantBlocked: []string{UnregisteredProcess, RegisteredProcessUnobserved, MissingMemberReason},
			check: func(t *testing.T, inv Inventory) {
				if len(inv.StaleMembers) != 1 || inv.StaleMembers[0].Reason != StaleUnverifiable ||
					!strings.Contains(inv.StaleMembers[0].Detail, "another pid namespace (a container's, or its host's: pid:[4026532201], this is pid:[4026531836])") ||
					len(inv.UnregisteredProcesses) != 1 || inv.UnregisteredProcesses[0].PID != 102 {
					t.Errorf("stale %+v unregistered %+v", inv.StaleMembers, inv.UnregisteredProcesses)
				}
			},
		},
		{
			name: "uninspectable processes make the inventory incomplete",
			snap: func() Snapshot {
				s := snapshotOf(three, a, b, c)
				s.Uninspectable = []int{9, 7, 9}
				return s
			}(),
			wantBlocked: []string{ProcessUninspectable},
			check: func(t *testing.T, inv Inventory) {
				if inv.IncompleteReasons[0].Detail != "majordomus-mcp processes whose sockets could not be read: pids 7, 9" {
					t.Errorf("reason %+v", inv.IncompleteReasons[0])
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := Classify(tt.snap)
			if got := codes(inv.BlockedReasons); !slices.Equal(got, append([]string{}, tt.wantBlocked...)) {
				t.Fatalf("blocked reasons %v, want %v\n%+v", got, tt.wantBlocked, inv.BlockedReasons)
			}
			open := len(tt.wantBlocked) == 0
			if inv.MutationGateSatisfied != open || inv.InventoryComplete != tt.wantComplete {
				t.Errorf("gate %v complete %v, want %v %v", inv.MutationGateSatisfied, inv.InventoryComplete, open, tt.wantComplete)
			}
			if open != (inv.BlockedReason == nil) || !open && *inv.BlockedReason != tt.wantBlocked[0] {
				t.Errorf("blocked_reason %v", inv.BlockedReason)
			}
			if len(inv.MutationsPerformed) != 0 || inv.MutationsPerformed == nil {
				t.Errorf("mutations_performed %v", inv.MutationsPerformed)
			}
			if tt.check != nil {
				tt.check(t, inv)
			}
		})
	}
}

func withAll(servers []server, f func(*Row, *Process)) []server {
	out := make([]server, len(servers))
	for i, s := range servers {
		out[i] = s.with(f)
	}
	return out
}

func wantStale(t *testing.T, inv Inventory, pid int, reason string) {
	t.Helper()
	for _, s := range inv.StaleMembers {
		if s.PID == pid {
			if s.Reason != reason || s.Detail == "" {
				t.Errorf("stale pid %d: %s (%s), want %s", pid, s.Reason, s.Detail, reason)
			}
			return
		}
	}
	t.Errorf("pid %d is not stale: %+v", pid, inv.StaleMembers)
}
