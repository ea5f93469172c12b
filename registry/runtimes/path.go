package runtimes

import (
	"cmp"
	"fmt"
	"path/filepath"
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

// Path returns the path of the runtime registry: flag when it is not
// empty, else $MAJORDOMUS_MCP_REGISTRY, else
// $XDG_STATE_HOME/majordomus-mcp/registry.db, else
// $HOME/.local/state/majordomus-mcp/registry.db. A relative XDG_STATE_HOME
// is ignored, as the XDG specification requires; a relative
// MAJORDOMUS_MCP_REGISTRY is refused: every process would read it from
// where it was started, a checkout's working tree as hosts start them.
// The result is absolute. getenv is os.Getenv, or an observed process's
// environment.
func Path(flag string, getenv func(string) string) (string, error) {
	if env := getenv(RegistryEnv); flag == "" && env != "" && !filepath.IsAbs(env) {
		return "", fmt.Errorf("%w: %s=%q is not an absolute path", ErrNoRegistryPath, RegistryEnv, env)
	}
	if pick := cmp.Or(flag, getenv(RegistryEnv)); pick != "" {
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
