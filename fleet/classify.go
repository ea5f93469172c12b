package fleet

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Classify decides the inventory of one snapshot. It is a pure function:
// the same snapshot gives the same inventory, byte for byte once encoded,
// whoever answers (AnsweringNamespace is copied, never consulted).
func Classify(s Snapshot) Inventory {
	c := &classification{s: s, roster: map[string]Configured{}}
	c.readRoster()
	c.match()
	c.classifyLive()
	c.countProfiles()
	c.judgeCohorts()
	c.decide()
	return c.inv
}

// classification is the work space of one Classify call.
type classification struct {
	s      Snapshot
	roster map[string]Configured
	names  []string // the roster's profiles, sorted
	live   []live   // the rows of this checkout that a process agrees with
	inv    Inventory

	cohortUnknown []Member
	revUnknown    []Member
	stopped       []Member // live members whose process is stopped
}

// live is a row of this checkout and the process that agrees with it.
type live struct {
	row  Row
	proc Process
}

func (c *classification) readRoster() {
	roster := c.s.Roster
	if c.s.RosterError != "" {
		roster = nil // unknown: nothing is judged against a roster it may not be
	}
	for _, e := range roster {
		if _, dup := c.roster[e.Profile]; dup || e.Profile == "" {
			continue
		}
		c.roster[e.Profile] = e
		c.names = append(c.names, e.Profile)
	}
	slices.Sort(c.names)
	c.inv = Inventory{
		IncompleteReasons:           []Reason{},
		ConfiguredMembers:           []ConfiguredMember{},
		RunningMembers:              []Member{},
		MissingMembers:              []MissingMember{},
		DuplicateMembers:            []Duplicate{},
		UnexpectedMembers:           []Member{},
		StaleMembers:                []StaleMember{},
		UnregisteredProcesses:       []Unregistered{},
		RepositoryBindingMismatches: []Mismatch{},
		RoleMismatches:              []Mismatch{},
		DrainingMembers:             []Draining{},
		Cohorts:                     []string{},
		StartupRevisions:            []string{},
		BlockedReasons:              []Reason{},
		MutationsPerformed:          []string{},
		AnsweringNamespace:          c.s.AnsweringNamespace,
		Repository:                  c.s.Repository,
		Registry:                    c.s.RegistryPath,
		Roster:                      append([]string{}, c.names...),
		ObservedAt:                  c.s.Now.UTC().Format(time.RFC3339Nano),
	}
}

// inScope reports whether a row is about this checkout: it names its
// repository id or its root. A row that names one and not the other is in
// scope, and a binding mismatch.
func (c *classification) inScope(r Row) bool {
	repo := c.s.Repository
	return r.RepositoryID != "" && r.RepositoryID == repo.ID || r.RepositoryRoot != "" && c.atRoot(r.RepositoryRoot)
}

// atRoot reports whether path names this checkout's root: it is its
// path, or, where both are known, it names its directory now (one
// directory reached by two paths, a bind mount, is one checkout; a path
// the checkout moved away from names another directory, or none).
func (c *classification) atRoot(path string) bool {
	dir := c.s.Repository.Dir
	return path == c.s.Repository.Root || path != "" && dir != "" && c.s.Dirs[path] == dir
}

// sameDir says, where the row and the snapshot both know it, whether the
// row's server serves this checkout's root directory: wherever that
// directory is now (the checkout moved, and its server with it), and not
// another one made at its path since. Ids ("device:inode") compare within
// one device only: a device numbered again (a network filesystem mounted
// again) tells nothing of its directories, and the path decides.
func (c *classification) sameDir(r Row) (same, known bool) {
	dir := c.s.Repository.Dir
	rowDevice, _, rowOK := strings.Cut(r.RepositoryDir, ":")
	device, _, ok := strings.Cut(dir, ":")
	if !rowOK || !ok || rowDevice != device {
		return false, false
	}
	return r.RepositoryDir == dir, true
}

// match pairs rows with processes. A row and a process agree when they
// name one pid, one start time and this boot, and the process started
// before the row was registered. Of several rows agreeing with one
// process, the newest registration is the member, and an older one is
// replaced unless it is that process's draining server (drainsBeside).
// Rows of other checkouts take part only to account for their processes.
func (c *classification) match() {
	procs := map[int]Process{}
	for _, p := range c.s.Processes {
		if _, dup := procs[p.PID]; !dup {
			procs[p.PID] = p
		}
	}
	c.inv.ProcessesObserved = len(procs)
	rows := slices.Clone(c.s.Rows)
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(b.RegisteredTicks, a.RegisteredTicks), strings.Compare(a.RuntimeID, b.RuntimeID))
	})
	claimed := map[int]bool{}
	elsewhere := map[int]bool{} // claimed by a row of another checkout
	for _, r := range rows {
		p, seen := procs[r.PID]
		if !SamePIDNamespace(r.PIDNamespace, c.s.PIDNamespace) { // its pid is not the observed process's
			p, seen = Process{}, false
		}
		thisBoot, _ := c.s.thisBoot(r.BootID)
		agree := seen && thisBoot && r.ProcessStart != 0 && p.Start == r.ProcessStart && r.RegisteredTicks >= p.Start
		replaced := agree && claimed[p.PID] && !drainsBeside(r, p)
		if agree && !replaced {
			claimed[p.PID] = true
		}
		// A row of another path whose process now runs in this checkout
		// (the checkout moved under it) is this checkout's, bound wrong;
		// not one whose checkout holds this one (a server of /a started
		// in /a/sub, which has a manifest of its own). Where the row and
		// the snapshot both know the root directory's id, it alone
		// decides: a server started with --repo names its checkout's old
		// path, and one made again at that path is another checkout.
		ours := agree && p.Checkout != "" && p.Checkout == c.s.Repository.Root && !within(p.Checkout, r.RepositoryRoot)
		same, known := c.sameDir(r)
		if known {
			ours = same
		}
		switch {
		case !ours && (known || !c.inScope(r)): // another checkout's
			if agree && !replaced {
				elsewhere[p.PID] = true
			}
		case agree && !replaced:
			c.live = append(c.live, live{row: r, proc: p})
		default:
			c.stale(r, p, seen, replaced)
		}
	}
	for _, pid := range slices.Sorted(maps.Keys(procs)) {
		p := procs[pid]
		switch {
		case claimed[pid] && !elsewhere[pid]:
		case claimed[pid] || c.ofAnotherCheckout(p):
			c.inv.ProcessesOfOtherCheckouts++
		default:
			c.inv.UnregisteredProcesses = append(c.inv.UnregisteredProcesses, Unregistered{
				PID: p.PID, ProcessStart: p.Start, PPID: p.PPID, Executable: p.Executable,
				Listen: nonNil(p.Listen), StartDir: optional(p.StartDir), Checkout: optional(p.Checkout),
			})
		}
	}
}

// drainsBeside reports whether an older row of a process is its draining
// server: a process that lost its lease and won it again serves its old
// sessions beside its new server. The row says lease-lost, and the process
// still listens where it names (its URL names loopback where it listens
// on every address); a row left behind by a server that has stopped is
// replaced.
func drainsBeside(r Row, p Process) bool {
	_, hostPort, _ := strings.Cut(r.URL, "://")
	hostPort, _, _ = strings.Cut(hostPort, "/")
	port := hostPort[strings.LastIndexByte(hostPort, ':')+1:]
	return r.State == StateLeaseLost && slices.ContainsFunc(p.Listen, func(l string) bool {
		return l == hostPort || l == "0.0.0.0:"+port || l == "[::]:"+port // as net.JoinHostPort writes them
	})
}

// ofAnotherCheckout reports whether an unregistered process was provably
// started for another checkout: the checkout found from its start
// directory is another, or (when none is found any more) its start
// directory is not under this checkout's root, where alone the search for
// this checkout could have begun. When nothing can be told it counts as
// this checkout's.
func (c *classification) ofAnotherCheckout(p Process) bool {
	switch {
	case p.Checkout != "":
		return !c.atRoot(p.Checkout)
	case p.StartDir != "":
		return !within(p.StartDir, c.s.Repository.Root)
	}
	return false
}

// stale records a row of this checkout that no process agrees with, and why.
func (c *classification) stale(r Row, p Process, seen, replaced bool) {
	reason, detail := c.staleReason(r, p, seen, replaced)
	c.inv.StaleMembers = append(c.inv.StaleMembers, StaleMember{
		Profile: r.Profile, PID: r.PID, RuntimeID: r.RuntimeID, State: r.State,
		ProcessStart: r.ProcessStart, BootID: r.BootID, RepositoryRoot: r.RepositoryRoot,
		URL: r.URL, RegisteredAt: stamp(r.RegisteredAt), Reason: reason, Detail: detail,
	})
}

func (c *classification) staleReason(r Row, p Process, seen, replaced bool) (string, string) {
	thisBoot, bootKnown := c.s.thisBoot(r.BootID)
	switch {
	case bootKnown && !thisBoot:
		return StaleAnotherBoot, fmt.Sprintf("registered during boot %s; this is boot %s", r.BootID, c.s.BootID)
	case replaced:
		return StaleReplaced, fmt.Sprintf("pid %d registered again, as a newer runtime", r.PID)
	case !SamePIDNamespace(r.PIDNamespace, c.s.PIDNamespace):
		return StaleUnverifiable, fmt.Sprintf("registered from another pid namespace (a container's, or its host's: %s, this is %s): whether its pid %d runs cannot be told from here",
			r.PIDNamespace, c.s.PIDNamespace, r.PID)
	case !bootKnown || r.ProcessStart == 0:
		// Unknown is never gone: only a pid no process has is, whatever
		// boot or process the row meant.
		if pr := c.s.PIDs[r.PID]; !seen && pr.Known && !pr.Exists {
			return StaleDead, fmt.Sprintf("no process has pid %d", r.PID)
		}
		why := "the row records no process start"
		switch {
		case c.s.BootID == "":
			why = "this process cannot read its boot id"
		case r.BootID == "":
			why = "the row records no boot id"
		}
		return StaleUnverifiable, fmt.Sprintf("%s: whether pid %d's process is the server it registered cannot be told", why, r.PID)
	case seen && p.Start != r.ProcessStart:
		return StaleRecycled, fmt.Sprintf("pid %d now belongs to a process started at tick %d, not %d", r.PID, p.Start, r.ProcessStart)
	case seen:
		return StaleRecycled, fmt.Sprintf("the row was registered at tick %d, before pid %d's process started (tick %d)", r.RegisteredTicks, r.PID, p.Start)
	}
	pr, ok := c.s.PIDs[r.PID]
	switch {
	case !ok || !pr.Known:
		return StaleUnverifiable, fmt.Sprintf("the system could not tell whether pid %d runs", r.PID)
	case !pr.Exists:
		return StaleDead, fmt.Sprintf("no process has pid %d", r.PID)
	case pr.Start != r.ProcessStart:
		return StaleRecycled, fmt.Sprintf("pid %d now belongs to a process started at tick %d, not %d", r.PID, pr.Start, r.ProcessStart)
	case c.s.ObservationError != "":
		return StaleUnverifiable, fmt.Sprintf("pid %d runs as registered, but no process listing could say whether it serves", r.PID)
	case slices.Contains(c.s.Uninspectable, r.PID):
		return StaleUnverifiable, fmt.Sprintf("pid %d runs as registered, but its sockets could not be read", r.PID)
	}
	return StaleUnobserved, fmt.Sprintf("pid %d runs as registered but holds no listening socket as a majordomus-mcp executable", r.PID)
}

// classifyLive sorts each live member into running, unexpected or
// draining, and notes its binding and role mismatches.
func (c *classification) classifyLive() {
	for _, l := range c.live {
		m := c.member(l.row, l.proc)
		if l.proc.Stopped {
			c.stopped = append(c.stopped, m)
		}
		if d := c.bindingMismatch(l.row, l.proc); d != "" {
			c.inv.RepositoryBindingMismatches = append(c.inv.RepositoryBindingMismatches, Mismatch{m, d})
		}
		if d := c.roleMismatch(l.row); d != "" {
			c.inv.RoleMismatches = append(c.inv.RoleMismatches, Mismatch{m, d})
		}
		_, configured := c.roster[l.row.Profile]
		configured = configured || c.s.RosterError != ""
		switch {
		case l.row.State == StateLeaseLost:
			// Its own record decides, not the lease file: a server that
			// still says leaseholder while the lease names another one
			// still takes new clients (for the second it needs to notice,
			// or for good if it never does), so it counts as running — a
			// duplicate.
			c.inv.DrainingMembers = append(c.inv.DrainingMembers, Draining{m, "it recorded that it lost its lease; it serves the sessions it had and ends with them"})
		case configured:
			c.inv.RunningMembers = append(c.inv.RunningMembers, m)
		default:
			c.inv.UnexpectedMembers = append(c.inv.UnexpectedMembers, m)
		}
	}
}

func (c *classification) member(r Row, p Process) Member {
	m := Member{
		Profile: r.Profile, PID: r.PID, RuntimeID: r.RuntimeID, Role: r.Role, State: r.State,
		ProcessStart: r.ProcessStart, BootID: r.BootID, RepositoryRoot: r.RepositoryRoot,
		RepositoryID: r.RepositoryID, CohortSource: r.CohortSource, StartupRevision: optional(r.StartupRevision),
		Transport: r.Transport, URL: r.URL, Executable: p.Executable, Listen: nonNil(p.Listen),
		RegisteredAt: stamp(r.RegisteredAt),
	}
	// A parent cannot be recycled while it is still this process's parent:
	// the kernel reparents a child when its parent dies.
	if r.CohortSource == CohortFromEnvironment || r.CohortSource == CohortFromParent && r.ParentPID > 1 && p.PPID == r.ParentPID {
		m.Cohort = optional(r.Cohort) // nil when none was recorded
	}
	if m.Cohort == nil {
		c.cohortUnknown = append(c.cohortUnknown, m)
	}
	if m.StartupRevision == nil {
		c.revUnknown = append(c.revUnknown, m)
	}
	return m
}

// bindingMismatch says how a live member's binding contradicts this
// checkout, or "".
func (c *classification) bindingMismatch(r Row, p Process) string {
	repo := c.s.Repository
	// This directory by another path: its repository id is that path's.
	aliased := r.RepositoryRoot != repo.Root && c.atRoot(r.RepositoryRoot)
	var why []string
	if r.RepositoryRoot != repo.Root && !aliased {
		why = append(why, fmt.Sprintf("registered for root %q, this checkout is %q", r.RepositoryRoot, repo.Root))
	}
	if r.RepositoryID != repo.ID && !aliased {
		why = append(why, fmt.Sprintf("registered repository id %q, this checkout's is %q", r.RepositoryID, repo.ID))
	}
	if p.Checkout != "" && p.Checkout != r.RepositoryRoot {
		why = append(why, fmt.Sprintf("its start directory belongs to the checkout %q", p.Checkout))
	}
	return strings.Join(why, "; ")
}

// roleMismatch says how a live member's role contradicts the roster, or "".
func (c *classification) roleMismatch(r Row) string {
	if r.State != StateLeaseholder && r.State != StateLeaseLost {
		return fmt.Sprintf("it records the state %q, which this release does not know", r.State)
	}
	e, ok := c.roster[r.Profile]
	if !ok || !e.RoleKnown || e.Role == r.Role {
		return ""
	}
	return fmt.Sprintf("the roster gives the profile %s the role %q; the server registered the role %q", r.Profile, e.Role, r.Role)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
