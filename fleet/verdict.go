package fleet

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// countProfiles fills configured, missing and duplicate members from the
// running ones, and sorts every member list.
func (c *classification) countProfiles() {
	slices.SortFunc(c.inv.RunningMembers, byMember)
	slices.SortFunc(c.inv.UnexpectedMembers, byMember)
	slices.SortFunc(c.inv.DrainingMembers, func(a, b Draining) int { return byMember(a.Member, b.Member) })
	slices.SortFunc(c.inv.RepositoryBindingMismatches, func(a, b Mismatch) int { return byMember(a.Member, b.Member) })
	slices.SortFunc(c.inv.RoleMismatches, func(a, b Mismatch) int { return byMember(a.Member, b.Member) })
	slices.SortFunc(c.inv.StaleMembers, func(a, b StaleMember) int {
		return cmp.Or(strings.Compare(a.Profile, b.Profile), cmp.Compare(a.PID, b.PID), strings.Compare(a.RuntimeID, b.RuntimeID))
	})

	names, known := c.names, c.s.RosterError == ""
	if !known { // two servers of one profile are a duplicate whatever the roster says
		for _, m := range c.inv.RunningMembers {
			if !slices.Contains(names, m.Profile) {
				names = append(names, m.Profile)
			}
		}
	}
	for _, name := range names {
		running := slices.DeleteFunc(slices.Clone(c.inv.RunningMembers), func(m Member) bool { return m.Profile != name })
		draining := 0
		for _, d := range c.inv.DrainingMembers {
			if d.Profile == name {
				draining++
			}
		}
		e := c.roster[name]
		var role *string
		if e.RoleKnown {
			role = &e.Role
		}
		cm := ConfiguredMember{Profile: name, Role: role, Instances: len(running), PIDs: []int{}, RuntimeIDs: []string{}, Draining: draining}
		for _, m := range running {
			cm.PIDs = append(cm.PIDs, m.PID)
			cm.RuntimeIDs = append(cm.RuntimeIDs, m.RuntimeID)
		}
		switch len(running) {
		case 0:
			cm.State = "missing"
			c.inv.MissingMembers = append(c.inv.MissingMembers, MissingMember{Profile: name, Role: role, Draining: draining})
		case 1:
			cm.State = "running"
		default:
			cm.State = "duplicate"
			c.inv.DuplicateMembers = append(c.inv.DuplicateMembers, Duplicate{
				Profile: name, Instances: len(running), PIDs: cm.PIDs, RuntimeIDs: cm.RuntimeIDs, Members: running,
			})
		}
		if known {
			c.inv.ConfiguredMembers = append(c.inv.ConfiguredMembers, cm)
		}
	}
	c.inv.ExactlyOnePerProfile = len(c.names) > 0 && len(c.inv.MissingMembers) == 0 && len(c.inv.DuplicateMembers) == 0
}

// liveMembers are every live member: running, unexpected and draining. A
// fleet is one coherent unit only if all of them are.
func (c *classification) liveMembers() []Member {
	out := slices.Clone(c.inv.RunningMembers)
	out = append(out, c.inv.UnexpectedMembers...)
	for _, d := range c.inv.DrainingMembers {
		out = append(out, d.Member)
	}
	return out
}

// judgeCohorts decides single_cohort and mixed_cohort from recorded cohort
// identity only, and startup_revisions and mixed_revision.
func (c *classification) judgeCohorts() {
	members := c.liveMembers()
	c.inv.Cohorts = known(members, func(m Member) *string { return m.Cohort })
	c.inv.SingleCohort, c.inv.MixedCohort = spread(len(members), len(c.inv.Cohorts), len(c.cohortUnknown) > 0)
	c.inv.StartupRevisions = known(members, func(m Member) *string { return m.StartupRevision })
	_, c.inv.MixedRevision = spread(len(members), len(c.inv.StartupRevisions), len(c.revUnknown) > 0)
}

// known lists the distinct known values of a member field, sorted.
func known(members []Member, field func(Member) *string) []string {
	out := []string{}
	for _, m := range members {
		if v := field(m); v != nil && !slices.Contains(out, *v) {
			out = append(out, *v)
		}
	}
	slices.Sort(out)
	return out
}

// spread says whether members values are all one (single) and whether two
// differ (mixed): mixed is true as soon as two known values differ; both
// are null when an unknown value could change the answer, or when there is
// no member at all.
func spread(members, distinct int, unknown bool) (single, mixed *bool) {
	yes, no := true, false
	switch {
	case members == 0:
		return nil, nil
	case distinct > 1:
		return &no, &yes
	case unknown:
		return nil, nil
	}
	return &yes, &no
}

// decide lists the reasons, completeness first, and closes or opens the gate.
func (c *classification) decide() {
	var incomplete, blocked []Reason
	add := func(into *[]Reason, code, detail string) { *into = append(*into, Reason{code, detail}) }
	s := c.s
	switch {
	case s.RosterError != "":
		add(&incomplete, RosterUnreadable, s.RosterError)
	case len(c.names) == 0:
		add(&incomplete, RosterUnreadable, "the roster names no profile")
	}
	if s.RegistryError != "" {
		add(&incomplete, RegistryUnreadable, s.RegistryError)
	}
	if s.ObservationError != "" {
		add(&incomplete, ProcessListingUnavailable, s.ObservationError)
	}
	if len(s.Uninspectable) > 0 {
		pids := slices.Compact(slices.Sorted(slices.Values(s.Uninspectable)))
		add(&incomplete, ProcessUninspectable, "majordomus-mcp processes whose sockets could not be read: pids "+joined(pids, ", ", strconv.Itoa))
	}
	if len(c.stopped) > 0 {
		// still members (a second server of the profile is a duplicate),
		// but whether they serve is not known: they answer nothing now
		add(&incomplete, ProcessStopped, "servers stopped (by a signal or a debugger), which answer nothing until continued: "+describe(c.stopped))
	}
	if u := c.inv.UnregisteredProcesses; len(u) > 0 {
		pids := joined(u, ", ", func(p Unregistered) string { return strconv.Itoa(p.PID) })
		add(&incomplete, UnregisteredProcess, "servers with no registry row: pids "+pids)
	}
	var unobserved []string
	for _, st := range c.inv.StaleMembers {
		if st.Reason == StaleUnobserved || st.Reason == StaleUnverifiable {
			unobserved = append(unobserved, fmt.Sprintf("%s (pid %d): %s", st.Profile, st.PID, st.Detail))
		}
	}
	if len(unobserved) > 0 {
		add(&incomplete, RegisteredProcessUnobserved, strings.Join(unobserved, "; "))
	}
	if len(c.cohortUnknown) > 0 {
		add(&incomplete, CohortUnknown, "no cohort is known for "+describe(c.cohortUnknown))
	}
	if len(c.revUnknown) > 0 {
		add(&incomplete, RevisionUnknown, "no startup revision is known for "+describe(c.revUnknown))
	}

	if m := c.inv.MissingMembers; len(m) > 0 {
		names := joined(m, ", ", func(x MissingMember) string { return x.Profile })
		add(&blocked, MissingMemberReason, "no running server for the profiles "+names)
	}
	if d := c.inv.DuplicateMembers; len(d) > 0 {
		add(&blocked, DuplicateMemberReason, "more than one running server for "+joined(d, ", ", func(x Duplicate) string {
			return fmt.Sprintf("%s (pids %s)", x.Profile, joined(x.PIDs, ", ", strconv.Itoa))
		}))
	}
	if u := c.inv.UnexpectedMembers; len(u) > 0 {
		add(&blocked, UnexpectedMemberReason, "running servers of profiles outside the roster: "+describe(u))
	}
	if m := c.inv.RepositoryBindingMismatches; len(m) > 0 {
		add(&blocked, BindingMismatchReason, describeMismatches(m))
	}
	if m := c.inv.RoleMismatches; len(m) > 0 {
		add(&blocked, RoleMismatchReason, describeMismatches(m))
	}
	if d := c.inv.DrainingMembers; len(d) > 0 {
		var ms []Member
		for _, x := range d {
			ms = append(ms, x.Member)
		}
		add(&blocked, DrainingMemberReason, "lease-lost servers still serving their sessions: "+describe(ms))
	}
	if c.inv.MixedCohort != nil && *c.inv.MixedCohort {
		add(&blocked, MixedCohortReason, "the live members belong to the cohorts "+joined(c.inv.Cohorts, ", ", strconv.Quote))
	}
	if c.inv.MixedRevision != nil && *c.inv.MixedRevision {
		add(&blocked, MixedRevisionReason, "the live members started from the revisions "+strings.Join(c.inv.StartupRevisions, ", "))
	}

	c.inv.IncompleteReasons = nonNil(incomplete)
	c.inv.InventoryComplete = len(incomplete) == 0
	c.inv.BlockedReasons = append(append([]Reason{}, incomplete...), blocked...)
	c.inv.MutationGateSatisfied = len(c.inv.BlockedReasons) == 0
	if !c.inv.MutationGateSatisfied {
		c.inv.BlockedReason = &c.inv.BlockedReasons[0].Code
	}
}

// byMember orders members by profile, pid and runtime id.
func byMember(a, b Member) int {
	return cmp.Or(strings.Compare(a.Profile, b.Profile), cmp.Compare(a.PID, b.PID), strings.Compare(a.RuntimeID, b.RuntimeID))
}

// describe names members as "profile (pid N)", in their sorted order.
func describe(ms []Member) string {
	ms = slices.Clone(ms)
	slices.SortFunc(ms, byMember)
	return joined(ms, ", ", func(m Member) string { return fmt.Sprintf("%s (pid %d)", m.Profile, m.PID) })
}

func describeMismatches(ms []Mismatch) string {
	return joined(ms, "; ", func(m Mismatch) string { return fmt.Sprintf("%s (pid %d): %s", m.Profile, m.PID, m.Detail) })
}

// joined is what text makes of each of xs, joined with sep.
func joined[T any](xs []T, sep string, text func(T) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = text(x)
	}
	return strings.Join(parts, sep)
}
