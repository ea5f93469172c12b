package main

import (
	"context"
	"encoding/json"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// runStatus reports the checkout's shared server, read-only: it takes no
// lease, creates nothing and changes nothing (node.Status).
func runStatus(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("status takes no arguments")
	}
	if err := node.ValidateProfile(env.opts.profile); err != nil {
		return usageError("--profile: %v", err)
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	times, err := node.ResolveTimings(co.Manifest.Server, env.opts.times)
	if err != nil {
		return nodeError(err)
	}
	report, err := node.Status(ctx, co, times)
	if err != nil {
		return nodeError(err)
	}
	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}
