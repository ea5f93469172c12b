package node

import (
	"context"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
)

// Checkout is the checkout a process serves, for one profile. Its root and
// manifest are read by the command; its index and MCP surface are built
// only when this process serves a client itself, so a process that
// attaches to a shared server starts in milliseconds and a bridge whose
// layer is broken can still attach; and the layer is watched only while
// it does (unwatch).
type Checkout struct {
	Root string
	// RootID is the root directory's id as the checkout was found
	// (registry.DirectoryID; "" unknown): the fleet tells the directory this
	// process serves by it, wherever it is moved after.
	RootID   string
	Manifest layer.Manifest
	Profile  string
	Strict   bool   // --strict: a degraded index is an error
	Registry string // the runtime registry's path as configured ("" = the default)
	Logger   *zap.Logger
	// LogLinesDropped counts the log lines stderr lost, for
	// majordomus_server; nil = none.
	LogLinesDropped func() uint64

	// peerNumbers, set by a node, draws peer numbers from the counter its
	// checkout's servers share; nil (standalone) numbers them in process.
	peerNumbers func(atLeast int) (int, error)

	mu        sync.Mutex
	served    *served            // nil until Load succeeds
	refused   error              // Load's refusal of the layer, while it stands (layer.Unchanged)
	stopWatch context.CancelFunc // ends the layer's watch; nil while none runs
	watched   chan struct{}      // closed once the last watch begun has ended
	bridges   bool               // the client is bridged since the last load: the watch ends with the last drain
	drains    int                // lease-lost servers serving on the layer still (draining)
	watching  sync.WaitGroup     // the layer's watches, which end with the life load was given
}

// served is a loaded layer with the MCP surface over it.
type served struct {
	layer   *layer.Layer
	surface *surface.Surface
}

// unshared is the history of the surface load built, where the calls no
// shared history kept wait; nil before: asking never builds the index.
func (c *Checkout) unshared() *surface.Executions {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.served == nil {
		return nil
	}
	return c.served.surface.Executions
}

// Load builds the index and the MCP surface once, and watches the layer
// until life ends (the process's lifetime, not the caller's: a server is
// often started under a context that bounds only its start) or unwatch; a
// later call watches it again. describe says what the process is, for
// majordomus_server; idle is the resolved idle timeout. A failure is
// returned (its layer error kept for errors.Is); a later call tries again,
// but for a refusal whose files have not changed, which it returns as it
// is: a client nothing could serve tries to share now and then, and each
// try would build the layer twice.
func (c *Checkout) load(life context.Context, describe func() surface.Process, idle time.Duration) (*served, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bridges = false // what loads it serves on it
	if c.served != nil {
		c.watch(life)
		return c.served, nil
	}
	if c.refused != nil && layer.Unchanged(c.refused) {
		return nil, c.refused
	}
	lay, err := layer.Open(layer.Config{Root: c.Root, Name: c.Manifest.Name, Strict: c.Strict, Logger: c.Logger.Named("layer")})
	if c.refused = err; err != nil {
		return nil, err
	}
	surf := surface.New(surface.Config{
		Layer:   lay,
		Version: release.Version(),
		Process: describe,
		Fleet:   c.inventory,
		Logger:  c.Logger.Named("surface"),
		// A session carried from another server keeps its peer id and
		// announcement, and ids are drawn from one counter across the
		// checkout's servers.
		PeerClaim:           carry.PeerClaim,
		Session:             carry.SessionOf,
		Carrying:            carry.Carrying,
		Call:                carry.Call,
		CarriedAnnouncement: carry.Announcement,
		PresenceID:          bridge.PresenceID,
		PeerNumbers:         c.peerNumbers,
		IdleTimeout:         idle, // how long a silent 2026-07-28 peer stays: the HTTP server's idle timeout

		LogLinesDropped: c.LogLinesDropped,
	})
	c.served = &served{layer: lay, surface: surf}
	c.watch(life)
	return c.served, nil
}

// watch watches the served layer until life ends or unwatch, unless it is
// watched now (mu held). Watched again, the index is first rebuilt with
// what changed meanwhile, and served, before load returns; and as a layer
// has one watch at a time, that waits for the one before (stopped) to end,
// so that nothing it publishes comes after. The subscribers hear of that
// rebuild from the new watch, not under mu, which a session that reads
// nothing would hold up to its write's bound.
func (c *Checkout) watch(life context.Context) {
	if c.stopWatch != nil || life.Err() != nil {
		return
	}
	lay, surf := c.served.layer, c.served.surface
	before, ended := c.watched, make(chan struct{})
	var old, caughtUp *layer.Index
	if before != nil {
		<-before
		if old, caughtUp, _ = lay.Rebuild(); caughtUp != nil {
			surf.Republish(old, caughtUp)
		}
	}
	ctx, stop := context.WithCancel(life)
	c.stopWatch, c.watched = stop, ended
	c.watching.Go(func() {
		defer close(ended)
		if caughtUp != nil {
			surf.TellUpdated(old, caughtUp)
		}
		if err := lay.Watch(ctx, surf.IndexChanged); err != nil {
			c.Logger.Warn("watching the layer failed; changes are not picked up", zap.Error(err))
		} else if life.Err() == nil {
			c.Logger.Info("the layer is no longer watched here: this process bridges its client to the shared server, which watches it")
		}
	})
}

// unwatch stops the layer's watch once no lease-lost server of this
// process serves on it: the process bridges its client to another's
// server, and a watch would hold an inotify instance and rebuild the index
// on every edit for nothing.
func (c *Checkout) unwatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bridges = true
	c.unwatchIdle()
}

// draining counts a lease-lost server that serves on the layer still,
// until drained: its sessions hear the layer's changes.
func (c *Checkout) draining() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drains++
}

// drained is a draining server's end: the last one leaves a process that
// bridges its client with no watch.
func (c *Checkout) drained() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drains--
	c.unwatchIdle()
}

// unwatchIdle stops the watch when nothing here serves on the layer (mu
// held).
func (c *Checkout) unwatchIdle() {
	if c.bridges && c.drains == 0 && c.stopWatch != nil {
		c.stopWatch()
		c.stopWatch = nil
	}
}

// unwatched returns once the layer's watch has ended, after the life given
// to load ended: nothing of the checkout's is then open (on Windows, a
// watched directory cannot be removed).
func (c *Checkout) unwatched() { c.watching.Wait() }

// inventory answers majordomus_fleet_inventory for this checkout. The
// roster is read from the manifest again, so that an operator who edited
// it is answered about the new one; a manifest that no longer reads makes
// the inventory incomplete.
func (c *Checkout) inventory(ctx context.Context) (any, error) {
	sc := runtimes.Scope{Answering: c.Profile}
	if m, err := layer.LoadManifest(c.Root); err != nil {
		sc.Roster, sc.RosterErr = RosterOf(c.Manifest), err
	} else {
		sc.Roster = RosterOf(m)
	}
	return classify(ctx, c, sc), nil
}

// RosterOf is the manifest's roster: its mcp.profiles with their roles, or
// the one profile "default" when it names none.
func RosterOf(m layer.Manifest) []fleet.Configured {
	if len(m.Profiles) == 0 {
		return []fleet.Configured{{Profile: registry.DefaultProfile, RoleKnown: true}}
	}
	out := make([]fleet.Configured, len(m.Profiles))
	for i, p := range m.Profiles {
		out[i] = fleet.Configured{Profile: p.Name, Role: p.Role, RoleKnown: true}
	}
	return out
}

// profileRole is the role the manifest gives profile, or "".
func profileRole(m layer.Manifest, profile string) string {
	if i := slices.IndexFunc(m.Profiles, func(p layer.Profile) bool { return p.Name == profile }); i >= 0 {
		return m.Profiles[i].Role
	}
	return ""
}

// describeAs says what a process that is in state role is, for
// majordomus_server and the instructions.
func describeAs(role, url, leasePath, profile string) surface.Process {
	d := surface.Process{Role: role, URL: url, LeasePath: leasePath, Profile: profile}
	switch machine.State(role) {
	case machine.Leaseholder, machine.OwnerLeft:
		d.Leaseholder = url != ""
	case machine.LeaseLost:
		d.Findings = []string{findingLost}
	}
	return d
}

// findingLost is what a server that lost its lease says of itself.
const findingLost = "this process no longer holds the lease: it serves the sessions it already had and takes on no new ones, and is not the checkout's server"
