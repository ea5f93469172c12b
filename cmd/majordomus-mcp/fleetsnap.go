package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"majordomus-mcp/fleet"
	"majordomus-mcp/layer"
	"majordomus-mcp/registry"
	"majordomus-mcp/registry/proc"
	"majordomus-mcp/registry/runtimes"
)

// fleetScope is what an inventory is taken for: a checkout, its roster,
// the registry, and who answers. Nothing in it comes from the inventory's
// caller.
type fleetScope struct {
	root         string
	repositoryID string
	roster       []fleet.Configured
	rosterErr    error
	registry     string // "" when registryErr says why there is none
	registryErr  error
	answering    string
}

// takeInventory gathers the snapshot — the registry's rows (read-only),
// the listening majordomus-mcp processes of this user
// (proc.ObserveListening), whether the rows' pids exist — and
// classifies it. It writes nothing, and the only signal it sends is
// signal 0.
func takeInventory(ctx context.Context, sc fleetScope) fleet.Inventory {
	snap := fleet.Snapshot{
		Roster:             sc.roster,
		Repository:         fleet.Repository{Root: sc.root, ID: sc.repositoryID},
		RegistryPath:       sc.registry,
		PIDs:               map[int]fleet.PID{},
		AnsweringNamespace: sc.answering,
	}
	if sc.rosterErr != nil {
		snap.RosterError = sc.rosterErr.Error()
	}
	snap.BootID, _ = proc.BootID() // "" never equals a recorded boot: every row is then stale, never live
	snap.SameBoot = proc.SameBoot

	rows, err := readRows(ctx, sc)
	if err != nil {
		snap.RegistryError = err.Error()
	}
	host := proc.Env{}
	snap.Rows = rows
	for _, r := range rows {
		if _, done := snap.PIDs[r.PID]; !done {
			p := host.Presence(r.PID)
			snap.PIDs[r.PID] = fleet.PID{Known: p.Known, Exists: p.Exists, Start: p.Start}
		}
	}

	listing, err := proc.ObserveListening(serverNames())
	if err != nil {
		snap.ObservationError = err.Error()
	}
	snap.Uninspectable = listing.Uninspectable
	for _, p := range listing.Processes {
		snap.Processes = append(snap.Processes, fleetProcess(p))
	}
	snap.Now = time.Now()
	return fleet.Classify(snap)
}

func readRows(ctx context.Context, sc fleetScope) ([]fleet.Row, error) {
	if sc.registryErr != nil {
		return nil, sc.registryErr
	}
	return runtimes.Read(ctx, sc.registry)
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

// fleetProcess converts an observed process, finding the checkout it was
// started for the way it found it: from its --repo, else its working
// directory, upwards to the nearest .ai/manifest.yaml.
func fleetProcess(p proc.ListeningProcess) fleet.Process {
	out := fleet.Process{
		PID: p.PID, PPID: p.PPID, Start: p.Start, Executable: p.Executable, Listen: p.Listen,
		StartDir: fleet.StartDir(p.Args, p.Cwd),
	}
	if out.StartDir != "" {
		out.Checkout, _ = layer.FindCheckout(out.StartDir)
	}
	return out
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
	sc := fleetScope{
		root:         c.root,
		repositoryID: layer.RepositoryID(c.root),
		answering:    c.process.profile,
	}
	if m, err := layer.LoadManifest(c.root); err != nil {
		sc.roster, sc.rosterErr = rosterOf(c.manifest), err
	} else {
		sc.roster = rosterOf(m)
	}
	sc.registry, sc.registryErr = runtimes.Path(c.registry, os.Getenv)
	return takeInventory(ctx, sc), nil
}
