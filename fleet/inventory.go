package fleet

// Inventory is the answer of majordomus_fleet_inventory and of
// `majordomus-mcp fleet` (docs/fleet.md). Every list is sorted (profile, pid,
// runtime id) and never null, so that two processes answering about one
// snapshot give the same bytes, answering_namespace aside.
type Inventory struct {
	InventoryComplete           bool               `json:"inventory_complete"`
	IncompleteReasons           []Reason           `json:"incomplete_reasons"`
	ConfiguredMembers           []ConfiguredMember `json:"configured_members"`
	RunningMembers              []Member           `json:"running_members"`
	MissingMembers              []MissingMember    `json:"missing_members"`
	DuplicateMembers            []Duplicate        `json:"duplicate_members"`
	UnexpectedMembers           []Member           `json:"unexpected_members"`
	StaleMembers                []StaleMember      `json:"stale_members"`
	UnregisteredProcesses       []Unregistered     `json:"unregistered_processes"`
	RepositoryBindingMismatches []Mismatch         `json:"repository_binding_mismatches"`
	RoleMismatches              []Mismatch         `json:"role_mismatches"`
	DrainingMembers             []Draining         `json:"draining_members"`
	// SingleCohort and MixedCohort are null when some live member's cohort
	// is unknown (or there is no live member): matching revisions never
	// make a cohort. MixedCohort is true as soon as two known cohorts differ.
	SingleCohort *bool    `json:"single_cohort"`
	MixedCohort  *bool    `json:"mixed_cohort"`
	Cohorts      []string `json:"cohorts"`
	// MixedRevision is null when some live member's revision is unknown and
	// the known ones agree (or there is no live member).
	MixedRevision         *bool    `json:"mixed_revision"`
	StartupRevisions      []string `json:"startup_revisions"`
	ExactlyOnePerProfile  bool     `json:"exactly_one_per_profile"`
	MutationGateSatisfied bool     `json:"mutation_gate_satisfied"`
	// BlockedReason is the code of the first blocked reason, the headline;
	// null when the gate is open.
	BlockedReason  *string  `json:"blocked_reason"`
	BlockedReasons []Reason `json:"blocked_reasons"`
	// AnsweringNamespace is metadata: it never affects the verdict.
	AnsweringNamespace string `json:"answering_namespace"`
	// MutationsPerformed is always empty: an inventory changes nothing.
	MutationsPerformed []string `json:"mutations_performed"`

	// What the inventory was taken of.
	Repository                Repository `json:"repository"`
	Registry                  string     `json:"registry"`
	Roster                    []string   `json:"roster"`
	ObservedAt                string     `json:"observed_at"`
	ProcessesObserved         int        `json:"processes_observed"`
	ProcessesOfOtherCheckouts int        `json:"processes_of_other_checkouts"`
}

// Reason is one reason the inventory is incomplete or the gate closed: a
// stable code (docs/fleet.md says what each calls for) and what it is about.
type Reason struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// The reason codes, in the order they are reported: first what makes the
// inventory incomplete (it cannot describe the whole fleet), then what
// breaks the invariant it describes.
const (
	RosterUnreadable            = "roster_unreadable"
	RegistryUnreadable          = "registry_unreadable"
	ProcessListingUnavailable   = "process_listing_unavailable"
	ProcessUninspectable        = "process_uninspectable"
	ProcessStopped              = "process_stopped"
	UnregisteredProcess         = "unregistered_process"
	RegisteredProcessUnobserved = "registered_process_unobserved"
	CohortUnknown               = "cohort_unknown"
	RevisionUnknown             = "revision_unknown"

	MissingMemberReason    = "missing_member"
	DuplicateMemberReason  = "duplicate_member"
	UnexpectedMemberReason = "unexpected_member"
	BindingMismatchReason  = "repository_binding_mismatch"
	RoleMismatchReason     = "role_mismatch"
	DrainingMemberReason   = "draining_member"
	MixedCohortReason      = "mixed_cohort"
	MixedRevisionReason    = "mixed_revision"
)

// Member is a live member: a registry row and an observed process that
// agree (pid, start time, boot) on a process that started before it
// registered.
type Member struct {
	Profile        string `json:"profile"`
	PID            int    `json:"pid"`
	RuntimeID      string `json:"runtime_id"`
	Role           string `json:"role"`
	State          string `json:"state"`
	ProcessStart   uint64 `json:"process_start"`
	BootID         string `json:"boot_id"`
	RepositoryRoot string `json:"repository_root"`
	RepositoryID   string `json:"repository_id"`
	// Cohort is null when unknown: none recorded, or recorded from a parent
	// that is no longer the process's parent.
	Cohort          *string  `json:"cohort"`
	CohortSource    string   `json:"cohort_source"`
	StartupRevision *string  `json:"startup_revision"`
	Transport       string   `json:"transport"`
	URL             string   `json:"url"`
	Executable      string   `json:"executable"`
	Listen          []string `json:"listen"`
	RegisteredAt    string   `json:"registered_at"`
}

// ConfiguredMember is one roster profile and what runs for it.
type ConfiguredMember struct {
	Profile string  `json:"profile"`
	Role    *string `json:"role"`
	// State is running (exactly one), missing (none) or duplicate (more).
	State      string   `json:"state"`
	Instances  int      `json:"instances"`
	PIDs       []int    `json:"pids"`
	RuntimeIDs []string `json:"runtime_ids"`
	// Draining counts its lease-lost servers still serving old sessions.
	Draining int `json:"draining"`
}

// MissingMember is a roster profile with no running server.
type MissingMember struct {
	Profile  string  `json:"profile"`
	Role     *string `json:"role"`
	Draining int     `json:"draining"`
}

// Duplicate is a roster profile with more than one running server, every
// one listed.
type Duplicate struct {
	Profile    string   `json:"profile"`
	Instances  int      `json:"instances"`
	PIDs       []int    `json:"pids"`
	RuntimeIDs []string `json:"runtime_ids"`
	Members    []Member `json:"members"`
}

// StaleMember is a row of this checkout that no running server agrees with.
type StaleMember struct {
	Profile        string `json:"profile"`
	PID            int    `json:"pid"`
	RuntimeID      string `json:"runtime_id"`
	State          string `json:"state"`
	ProcessStart   uint64 `json:"process_start"`
	BootID         string `json:"boot_id"`
	RepositoryRoot string `json:"repository_root"`
	URL            string `json:"url"`
	RegisteredAt   string `json:"registered_at"`
	// Reason is dead, recycled, another_boot, replaced (its process
	// registered again), unobserved or unverifiable; the last two make the
	// inventory incomplete.
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Unregistered is an observed server with no row, started for this
// checkout or for one that cannot be told.
type Unregistered struct {
	PID          int      `json:"pid"`
	ProcessStart uint64   `json:"process_start"`
	PPID         int      `json:"ppid"`
	Executable   string   `json:"executable"`
	Listen       []string `json:"listen"`
	StartDir     *string  `json:"start_dir"`
	Checkout     *string  `json:"checkout"`
}

// Mismatch is a live member whose row contradicts the roster or this
// checkout; Detail says how.
type Mismatch struct {
	Member
	Detail string `json:"detail"`
}

// Draining is a live member that lost its lease and serves only the
// sessions it had: neither a duplicate nor healthy.
type Draining struct {
	Member
	Reason string `json:"reason"`
}

// Stale reasons.
const (
	StaleDead         = "dead"
	StaleRecycled     = "recycled"
	StaleAnotherBoot  = "another_boot"
	StaleReplaced     = "replaced"
	StaleUnobserved   = "unobserved"
	StaleUnverifiable = "unverifiable"
)
