package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
)

// runFleet prints the checkout's fleet inventory as JSON and exits 0 only
// when its mutation gate is satisfied, else 10, so that a script can gate
// a change on it. It writes nothing (the registry is opened read-only and
// never created), restarts nothing, and sends no signal but signal 0.
func runFleet(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("fleet takes no arguments (the roster is --roster or the manifest's mcp.profiles)")
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	sc := runtimes.Scope{Root: co.Root, RepositoryID: layer.RepositoryID(co.Root), Roster: node.RosterOf(co.Manifest), Answering: "cli"}
	if env.opts.roster != "" {
		if sc.Roster, err = parseRoster(env.opts.roster); err != nil {
			return usageError("--roster: %v", err)
		}
	}
	sc.Registry, sc.RegistryErr = runtimes.Path(env.opts.registry, os.Getenv)
	inv := node.Inventory(ctx, sc)

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

// parseRoster reads --roster: profile names separated by commas. Roles are
// not given this way, so none is checked.
func parseRoster(s string) ([]fleet.Configured, error) {
	var out []fleet.Configured
	var seen []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("an empty profile name in %q", s)
		}
		if err := registry.ValidateProfile(name); err != nil {
			return nil, err
		}
		if slices.Contains(seen, name) {
			return nil, fmt.Errorf("the profile %q twice", name)
		}
		seen = append(seen, name)
		out = append(out, fleet.Configured{Profile: name})
	}
	return out, nil
}
