package runtimes

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// Scope is what an inventory is taken for: a checkout, its roster, the
// registry, and who answers. Nothing in it comes from the inventory's
// caller.
type Scope struct {
	Root         string
	RepositoryID string
	Roster       []fleet.Configured
	RosterErr    error
	Registry     string // "" when RegistryErr says why there is none
	RegistryErr  error
	Answering    string
	// ServerNames are the executable names a majordomus-mcp server runs as.
	ServerNames []string
	// FindCheckout finds the checkout a directory belongs to, as a server
	// started there finds it (layer.FindCheckout); nil tells none.
	FindCheckout func(dir string) (string, error)
}

// Collect gathers the evidence of an inventory — the registry's rows
// (read-only), the listening majordomus-mcp processes of this user
// (proc.ObserveListening), whether the rows' pids exist, the directory
// each of their roots and checkouts names now — for fleet.Classify. It
// writes nothing, and the only signal it sends is signal 0.
func Collect(ctx context.Context, sc Scope) fleet.Snapshot {
	snap := fleet.Snapshot{
		Roster:             sc.Roster,
		Repository:         fleet.Repository{Root: sc.Root, ID: sc.RepositoryID, Dir: registry.DirectoryID(sc.Root)},
		RegistryPath:       sc.Registry,
		PIDs:               map[int]fleet.PID{},
		AnsweringNamespace: sc.Answering,
		SameBoot:           proc.SameBoot,
		PIDNamespace:       proc.PIDNamespace(),
	}
	if sc.RosterErr != nil {
		snap.RosterError = sc.RosterErr.Error()
	}
	snap.BootID, _ = proc.BootID() // "": every row is then stale (unverifiable), never live

	var rows []fleet.Row
	err := sc.RegistryErr
	if err == nil {
		rows, err = Read(ctx, sc.Registry)
	}
	if err != nil {
		snap.RegistryError = err.Error()
	}
	snap.Rows = rows
	host := proc.Env{}
	for _, r := range rows {
		if _, done := snap.PIDs[r.PID]; !done {
			p := host.Presence(r.PID)
			snap.PIDs[r.PID] = fleet.PID{Known: p.Known, Exists: p.Exists, Start: p.Start}
		}
	}

	listing, err := proc.ObserveListening(append(sc.ServerNames, liveNames(rows, snap.PIDs)...))
	if err != nil {
		snap.ObservationError = err.Error()
	}
	snap.Uninspectable = listing.Uninspectable
	for _, p := range listing.Processes {
		snap.Processes = append(snap.Processes, sc.process(p))
	}
	// Only a path that may name this directory is looked at (a root of no
	// other directory, a process's checkout): each is a stat, which a
	// mount that stopped answering (NFS) would hold.
	snap.Dirs = map[string]string{}
	for _, r := range rows {
		if mayName(r.RepositoryDir, snap.Repository.Dir) {
			snap.Dirs[r.RepositoryRoot] = ""
		}
	}
	for _, p := range snap.Processes {
		snap.Dirs[p.Checkout] = ""
	}
	delete(snap.Dirs, "")
	delete(snap.Dirs, sc.Root)
	for path := range snap.Dirs {
		if snap.Repository.Dir != "" {
			snap.Dirs[path] = registry.DirectoryID(path)
		}
	}
	snap.Now = time.Now()
	return snap
}

// mayName reports whether a row's root, whose directory's id was rowDir
// when it registered, may name the directory dir now: its row recorded
// none, this one, or one of another device, whose ids tell nothing of
// dir's (a device numbered again: the path decides, fleet.Classify).
func mayName(rowDir, dir string) bool {
	rowDevice, _, rowOK := strings.Cut(rowDir, ":")
	device, _, ok := strings.Cut(dir, ":")
	return !rowOK || !ok || rowDevice != device || rowDir == dir
}

// liveNames are the executable names of the rows whose processes run as
// recorded: a server started through a link to a binary of another name
// runs as that binary, whose name its row recorded, resolved. (One whose
// binary was renamed since runs under the new name, which no row has.)
func liveNames(rows []fleet.Row, pids map[int]fleet.PID) []string {
	var names []string
	for _, r := range rows {
		if p := pids[r.PID]; p.Exists && p.Start == r.ProcessStart && r.Executable != "" {
			names = append(names, filepath.Base(strings.TrimSuffix(r.Executable, " (deleted)")))
		}
	}
	return names
}

// process converts an observed process, finding the checkout it was
// started for the way it found it: from its --repo, else its working
// directory, upwards to the nearest .ai/manifest.yaml.
func (sc Scope) process(p proc.ListeningProcess) fleet.Process {
	out := fleet.Process{
		PID: p.PID, PPID: p.PPID, Start: p.Start, Executable: p.Executable, Listen: p.Listen,
		StartDir: fleet.StartDir(p.Args, p.Cwd), Stopped: p.Stopped,
	}
	if out.StartDir != "" && sc.FindCheckout != nil {
		out.Checkout, _ = sc.FindCheckout(out.StartDir)
	}
	return out
}
