package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
)

// Fleet is the inventory of the checkout that holds f.Repo that `fleet`
// prints, answered by the command line rather than by a server: of roster,
// or of the manifest's roster when roster is nil, with the runtime registry
// f.Registry names. A manifest that does not read costs the inventory its
// roster (roster_unreadable: the default profile's is assumed), not the
// inventory. It writes nothing: the registry is opened read-only and never
// created, and no process is sent any signal but signal 0.
func Fleet(ctx context.Context, f Flags, roster []fleet.Configured) (fleet.Inventory, error) {
	root, err := layer.FindCheckout(f.Repo) // "": the working directory
	if err != nil {
		return fleet.Inventory{}, err
	}
	sc := runtimes.Scope{Roster: roster, Answering: "cli"}
	if roster == nil {
		m, err := layer.LoadManifest(root)
		sc.Roster, sc.RosterErr = RosterOf(m), err
	}
	return classify(ctx, &Checkout{Root: root, Registry: f.Registry}, sc), nil
}

// ParseRoster reads a roster given as profile names separated by commas;
// "" gives none (nil). Roles are not given this way, so none is checked.
func ParseRoster(s string) ([]fleet.Configured, error) {
	if s == "" {
		return nil, nil
	}
	var out []fleet.Configured
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("an empty profile name in %q", s)
		}
		if err := registry.ValidateProfile(name); err != nil {
			return nil, err
		}
		if slices.ContainsFunc(out, func(c fleet.Configured) bool { return c.Profile == name }) {
			return nil, fmt.Errorf("the profile %q twice", name)
		}
		out = append(out, fleet.Configured{Profile: name})
	}
	return out, nil
}

// classify classifies the evidence gathered for sc, in co's checkout and
// the runtime registry co names.
func classify(ctx context.Context, co *Checkout, sc runtimes.Scope) fleet.Inventory {
	sc.Root, sc.RepositoryID = co.Root, layer.RepositoryID(co.Root)
	sc.Registry, sc.RegistryErr = runtimes.Path(co.Registry, os.Getenv)
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
