package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// runFleet prints the checkout's fleet inventory as JSON and exits 0 only
// when its mutation gate is satisfied, else 10, so that a script can gate
// a change on it. It writes nothing, restarts nothing, and sends no signal
// but signal 0 (node.Fleet).
func runFleet(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("fleet takes no arguments (the roster is --roster or the manifest's mcp.profiles)")
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	roster, err := node.ParseRoster(env.opts.roster)
	if err != nil {
		return usageError("--roster: %v", err)
	}
	inv := node.Fleet(ctx, co, roster)

	enc := json.NewEncoder(env.stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(inv); err != nil {
		return withCode(exitInternal, fmt.Errorf("writing the inventory: %w", err))
	}
	if !inv.MutationGateSatisfied {
		return withCode(exitContract, fmt.Errorf("the fleet's mutation gate is closed: %s (%s)", *inv.BlockedReason, inv.BlockedReasons[0].Detail))
	}
	return nil
}
