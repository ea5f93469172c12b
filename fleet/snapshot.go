package fleet

import (
	"path/filepath"
	"strings"
	"time"
)

// Snapshot is everything an inventory is decided from: what was read and
// observed at one moment. Nothing in it comes from the caller of the
// inventory; the answering process gathered all of it.
type Snapshot struct {
	// Roster is the configured members: the manifest's mcp.profiles, or
	// --roster. RosterError says why it could not be read: then Roster is
	// not used, every live server runs, and none is missing, unexpected or
	// of another role (two of one profile are still a duplicate).
	Roster      []Configured
	RosterError string
	// Repository is the checkout the inventory is about.
	Repository Repository
	// Dirs is the id of the directory (registry.DirectoryID) that a path
	// names now ("" when none is there or it cannot be told), for each
	// process's checkout and each row's root that may be this directory's
	// (its row recorded this directory, none, or one of another device): a
	// path that names this checkout's directory (a bind mount of it) is
	// this checkout, by another path.
	Dirs map[string]string
	// BootID is this boot's id. SameBoot compares two boot ids (where a
	// boot id is a computed boot time, two readings of one boot differ a
	// little); nil compares them for equality.
	BootID   string
	SameBoot func(a, b string) bool
	// RegistryPath is where the rows were read; RegistryError why they, or
	// some of them, could not be (Rows are then those that were read).
	RegistryPath  string
	Rows          []Row
	RegistryError string
	// Processes are the observed listening majordomus-mcp processes of this
	// user; ObservationError why there are none to trust; Uninspectable the
	// pids of majordomus-mcp processes whose sockets could not be read.
	Processes        []Process
	ObservationError string
	Uninspectable    []int
	// PIDs says, for the pid of each row, what the system told of it.
	PIDs map[int]PID
	// Now is when the snapshot was taken.
	Now time.Time
	// PIDNamespace is the observer's: a row of another pid namespace names
	// by its pid a process the observer cannot judge.
	PIDNamespace string
	// AnsweringNamespace names who answers ("cli", or the answering
	// server's profile). It is reported and never weighs in the verdict.
	AnsweringNamespace string
}

// Configured is one roster entry.
type Configured struct {
	Profile string
	// Role is the role the roster gives the profile ("" for none); it is
	// checked only when RoleKnown (a --roster gives names only).
	Role      string
	RoleKnown bool
}

// Repository is a checkout: its root and repository id, and its root
// directory's id (registry.DirectoryID; "" when unknown), which tells the
// checkout there now from one moved away or made again at its path.
type Repository struct {
	Root string `json:"root"`
	ID   string `json:"repository_id"`
	Dir  string `json:"-"`
}

// Row is one shared server's row in the runtime registry
// (registry/runtimes stores exactly this): what the server says about
// itself, written from its own start-up path right after its HTTP bind and
// removed on its clean exit (docs/fleet.md). The row is evidence of identity
// only; whether the server still runs is for process observation to say.
type Row struct {
	// RuntimeID is the server's lease instance: random, unique per server.
	RuntimeID string
	Profile   string
	// Role is the role the manifest the server read gives its profile; ""
	// when it gives none.
	Role string
	// State is "leaseholder", or "lease-lost" once the server lost its
	// lease.
	State          string
	RepositoryRoot string
	RepositoryID   string
	// RepositoryDir is the id of the root directory the server serves, as
	// it registered ([Repository].Dir); "" when unknown.
	RepositoryDir string
	// PIDNamespace is its process's (proc.PIDNamespace); "" when unknown.
	PIDNamespace string
	// Cohort identifies the client cohort that launched the server; "" when
	// unknown. CohortSource says where it came from.
	Cohort       string
	CohortSource string
	// ParentPID and ParentStart are the launching parent, for a cohort taken
	// from it (zero otherwise).
	ParentPID   int
	ParentStart uint64
	// StartupRevision identifies the code the server started from; "" when
	// unknown. ModuleVersion and VCSRevision are its parts, for people.
	StartupRevision string
	ModuleVersion   string
	VCSRevision     string
	// Transport is how the server is reached ("streamable-http"), URL where.
	Transport string
	URL       string
	// PID, ProcessStart (its start token) and BootID identify the server's
	// process, as in the lease.
	PID          int
	ProcessStart uint64
	BootID       string
	Executable   string
	// RegisteredAt is the wall-clock time of the registration, for people;
	// RegisteredTicks is the clock start tokens are read in, at that moment,
	// which is what "the process started before it registered" is judged
	// on: on Linux both come from the kernel's boot clock, so no wall-clock
	// step can fake the order.
	RegisteredAt    time.Time
	RegisteredTicks uint64
}

// Process is an observed listening majordomus-mcp process
// (proc.ListeningProcess), with the checkout it was started for.
type Process struct {
	PID        int
	PPID       int
	Start      uint64
	Executable string
	Listen     []string
	// StartDir is where it looks for its checkout (see [StartDir]); "" when
	// that cannot be told.
	StartDir string
	// Checkout is the checkout root found from StartDir; "" when none was
	// found (the directory may be gone).
	Checkout string
	// Stopped: the system says it is stopped (SIGSTOP, a debugger): it
	// answers nothing until continued, yet it is still the member it was.
	Stopped bool
}

// PID is what the system says about a pid (proc.Presence).
type PID struct {
	Known  bool
	Exists bool
	Start  uint64
}

// The states and cohort sources a row may record (registry's constants;
// repeated here so that this package stays a pure function of values).
const (
	StateLeaseholder      = "leaseholder"
	StateLeaseLost        = "lease-lost"
	CohortFromEnvironment = "environment"
	CohortFromParent      = "parent"
)

// StartDir returns the directory a majordomus-mcp process was started to
// look for its checkout from: its last --repo (or -repo, with = or a
// separate value), made absolute against cwd, else cwd. A working directory
// that was removed (" (deleted)") still names where it was. "" means it
// cannot be told.
func StartDir(args []string, cwd string) string {
	cwd = strings.TrimSuffix(cwd, " (deleted)")
	repo := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "repo" {
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		repo = value
	}
	switch {
	case repo == "":
		return cwd
	case filepath.IsAbs(repo):
		return filepath.Clean(repo)
	case cwd == "":
		return ""
	default:
		return filepath.Join(cwd, repo)
	}
}

// within reports whether dir is root or lies under it, parted by the
// system's separators (on Windows \ as well as /).
func within(dir, root string) bool {
	if dir == root {
		return true
	}
	isSep := func(r rune) bool { return r == '/' || r == filepath.Separator }
	root = strings.TrimRightFunc(root, isSep)
	return len(dir) > len(root) && strings.HasPrefix(dir, root) && isSep(rune(dir[len(root)]))
}

// thisBoot reports whether id names the boot the snapshot was taken in,
// and whether that can be told at all: a row that records no boot id, or
// a snapshot taken where the boot id could not be read, says nothing of
// it — never the same boot, never provably another.
func (s Snapshot) thisBoot(id string) (same, known bool) {
	if id == "" || s.BootID == "" {
		return false, false
	}
	if s.SameBoot != nil {
		return s.SameBoot(id, s.BootID), true
	}
	return id == s.BootID, true
}

// SamePIDNamespace reports whether two processes' pid namespaces (Row's
// PIDNamespace) are one, or either is unknown: only then does one's pid
// name the same process for the other.
func SamePIDNamespace(a, b string) bool { return a == "" || b == "" || a == b }
