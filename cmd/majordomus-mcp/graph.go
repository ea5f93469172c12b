package main

import (
	"context"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// runGraph prints the process state machine's diagram, rendered from the
// very configuration every process runs.
func runGraph(_ context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("graph takes no arguments (use --format)")
	}
	out, err := machine.Graph(env.opts.format)
	if err != nil {
		return usageError("--format %q: want dot, mermaid or json", env.opts.format)
	}
	_, err = fmt.Fprint(env.stdout, out)
	return err
}
