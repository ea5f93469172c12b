package main

import (
	"context"
	"fmt"

	"majordomus-mcp/internal/release"
)

func runVersion(_ context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("version takes no arguments")
	}
	_, err := fmt.Fprintln(env.stdout, "majordomus-mcp", release.Version())
	return err
}
