package registry

import (
	"fmt"
	"path/filepath"
	"time"
)

// RegistryEnv is the environment variable that overrides where the runtime
// registry is (after the --registry flag, before XDG_STATE_HOME). Tests set
// it so that they never share the user's real registry.
const RegistryEnv = "MAJORDOMUS_MCP_REGISTRY"

// The states a server records in its row. They are the machine's state
// names, so the registry, the logs and the graph use one vocabulary.
const (
	// StateLeaseholder: the server holds its checkout's lease and takes new
	// clients.
	StateLeaseholder = "leaseholder"
	// StateLeaseLost: the server lost its lease; it serves the sessions it
	// had and ends with them (a draining member).
	StateLeaseLost = "lease-lost"
)

// The sources of a server's cohort.
const (
	// CohortFromEnvironment: the client set MAJORDOMUS_MCP_CLIENT_COHORT_ID.
	CohortFromEnvironment = "environment"
	// CohortFromParent: the process that launched the server (pid and start
	// time); it holds only while that parent is still the server's parent.
	CohortFromParent = "parent"
	// CohortUnknown: neither could be told (the parent was already gone).
	CohortUnknown = "unknown"
)

// RuntimeRow is one shared server's row in the runtime registry: what the
// server says about itself, written from its own start-up path right after
// its HTTP bind and removed on its clean exit (SPEC §9). The row is evidence
// of identity only; whether the server still runs is for process
// observation to say.
type RuntimeRow struct {
	// RuntimeID is the server's lease instance: random, unique per server.
	RuntimeID string
	Profile   string
	// Role is the role the manifest the server read gives its profile; ""
	// when it gives none.
	Role string
	// State is StateLeaseholder, or StateLeaseLost once the server lost its
	// lease.
	State          string
	RepositoryRoot string
	RepositoryID   string
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
	// PID, ProcessStart (the start token, [ProcessStart]) and BootID identify the
	// server's process, as in the lease.
	PID          int
	ProcessStart uint64
	BootID       string
	Executable   string
	// RegisteredAt is the wall-clock time of the registration, for people;
	// RegisteredTicks is [BootTicks] at that moment (the unit of
	// ProcessStart), which is what "the process started before it
	// registered" is judged on: on Linux both come from the kernel's boot
	// clock, so no wall-clock step can fake the order.
	RegisteredAt    time.Time
	RegisteredTicks uint64
}

// RuntimePath returns the path of the runtime registry: flag when it is not
// empty, else $MAJORDOMUS_MCP_REGISTRY, else
// $XDG_STATE_HOME/majordomus-mcp/registry.db, else
// $HOME/.local/state/majordomus-mcp/registry.db. A relative XDG_STATE_HOME
// is ignored, as the XDG specification requires. The result is absolute.
// getenv is os.Getenv, or an observed process's environment.
func RuntimePath(flag string, getenv func(string) string) (string, error) {
	pick := flag
	if pick == "" {
		pick = getenv(RegistryEnv)
	}
	if pick != "" {
		abs, err := filepath.Abs(pick)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrNoRegistryPath, err)
		}
		return abs, nil
	}
	if state := getenv("XDG_STATE_HOME"); filepath.IsAbs(state) {
		return filepath.Join(state, "majordomus-mcp", "registry.db"), nil
	}
	if local := getenv("LOCALAPPDATA"); filepath.IsAbs(local) { // Windows
		return filepath.Join(local, "majordomus-mcp", "registry.db"), nil
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state", "majordomus-mcp", "registry.db"), nil
	}
	return "", fmt.Errorf("%w: set --registry, %s, XDG_STATE_HOME, LOCALAPPDATA or HOME", ErrNoRegistryPath, RegistryEnv)
}
