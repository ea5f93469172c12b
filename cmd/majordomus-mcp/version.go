package main

import (
	"context"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
)

// runVersion prints the version and the startup revision, the code this
// binary was built from, as a server of it records it in the fleet
// registry and `fleet` reports it (startup_revisions): an operator matches
// one to the other.
func runVersion(_ context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("version takes no arguments")
	}
	_, err := fmt.Fprintln(env.stdout, versionLine(release.Version(), release.StartupRevision().Startup))
	return err
}

// versionLine is what `version` prints.
func versionLine(version, startup string) string {
	if startup == "" {
		startup = "unknown"
	}
	return fmt.Sprintf("majordomus-mcp %s (startup revision %s)", version, startup)
}
