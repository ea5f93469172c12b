package node

import (
	"context"
	"fmt"
	"os"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/proc"
	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// What the command line takes from this package besides a node: the
// defaults of its flags, the checkout it works on, and the errors it gives
// exit codes to. The command imports no other package of the module that
// a node wires together.

// The defaults of the command line's flags, each declared by the package
// that owns the fact.
const (
	DefaultProfile     = registry.DefaultProfile
	DefaultHTTPHost    = "127.0.0.1"
	DefaultHTTPPort    = 8741
	DefaultMaxSessions = transport.DefaultMaxSessions
	// JoinRetryMax is what a client served alone's wait before it tries to
	// share again doubles up to.
	JoinRetryMax = machine.DefaultJoinRetryMax
)

// DefaultTimings are the timings no manifest and no flag sets.
func DefaultTimings() Timings { return resolve(layer.Timings{}, Timings{}).values() }

// The errors a command tells apart in what this package returns
// (errors.Is), for its exit codes.
var (
	// ErrNoCheckout: no ancestor of the start directory is a checkout.
	ErrNoCheckout = layer.ErrNoCheckout
	// ErrInvalidManifest: the checkout's manifest cannot be read or breaks
	// the layer's contract.
	ErrInvalidManifest = layer.ErrInvalidManifest
	// ErrDegraded: a strict checkout's index carries errors.
	ErrDegraded = layer.ErrDegraded
)

// ValidateProfile says why name cannot name a server profile, or nil.
func ValidateProfile(name string) error { return registry.ValidateProfile(name) }

// FindCheckout locates the checkout that holds dir (the working directory
// when dir is "") and reads its manifest. The checkout it returns has its
// root and manifest; the caller sets the rest, as its command line says.
func FindCheckout(dir string) (*Checkout, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("reading the working directory: %w", err)
		}
		dir = wd
	}
	root, err := layer.FindCheckout(dir)
	if err != nil {
		return nil, err
	}
	m, err := layer.LoadManifest(root)
	if err != nil {
		return nil, err
	}
	return &Checkout{Root: root, Manifest: m}, nil
}

// ParentGone reports, once, that this process's parent is gone, until ctx
// ends: a host killed hard leaves its children behind with stdin still
// open.
func ParentGone(ctx context.Context) <-chan string { return proc.WatchParent(ctx) }
