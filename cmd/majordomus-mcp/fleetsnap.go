package main

import (
	"context"
	"os"
	"path/filepath"

	"majordomus-mcp/fleet"
	"majordomus-mcp/layer"
	"majordomus-mcp/registry"
	"majordomus-mcp/registry/runtimes"
)

// takeInventory classifies the evidence gathered for sc.
func takeInventory(ctx context.Context, sc runtimes.Scope) fleet.Inventory {
	sc.ServerNames = serverNames()
	sc.FindCheckout = layer.FindCheckout
	return fleet.Classify(runtimes.Collect(ctx, sc))
}

// serverNames are the executable names a majordomus-mcp server runs as:
// the product's, and this binary's own (a renamed copy serves too).
func serverNames() []string {
	names := []string{"majordomus-mcp"}
	if exe, err := os.Executable(); err == nil && filepath.Base(exe) != names[0] {
		names = append(names, filepath.Base(exe))
	}
	return names
}

// rosterOf is the manifest's roster: its mcp.profiles with their roles, or
// the one profile "default" when it names none.
func rosterOf(m layer.Manifest) []fleet.Configured {
	if len(m.Profiles) == 0 {
		return []fleet.Configured{{Profile: registry.DefaultProfile, RoleKnown: true}}
	}
	out := make([]fleet.Configured, len(m.Profiles))
	for i, p := range m.Profiles {
		out[i] = fleet.Configured{Profile: p.Name, Role: p.Role, RoleKnown: true}
	}
	return out
}

// inventory answers majordomus_fleet_inventory for this process's
// checkout. The roster is read from the manifest again, so that an
// operator who edited it is answered about the new one; a manifest that no
// longer reads makes the inventory incomplete.
func (c *checkout) inventory(ctx context.Context) (any, error) {
	sc := runtimes.Scope{
		Root:         c.root,
		RepositoryID: layer.RepositoryID(c.root),
		Answering:    c.process.profile,
	}
	if m, err := layer.LoadManifest(c.root); err != nil {
		sc.Roster, sc.RosterErr = rosterOf(c.manifest), err
	} else {
		sc.Roster = rosterOf(m)
	}
	sc.Registry, sc.RegistryErr = runtimes.Path(c.registry, os.Getenv)
	return takeInventory(ctx, sc), nil
}
