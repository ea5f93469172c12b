package node

import (
	"cmp"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// Flags are what a command line says to this package: the checkout it
// works on, and how a node of it serves.
type Flags struct {
	Repo     string // a directory of the checkout; "" = the working directory
	Profile  string // the server profile this process serves
	Strict   bool   // a degraded index is an error
	Registry string // the runtime registry's path ("" = the default)
	HTTPHost string // where a leaseholder binds
	HTTPPort int    // 0: any free port
	// MaxSessions caps the leaseholder's HTTP sessions.
	MaxSessions int
	// Times: a zero one takes the manifest's, else the default.
	Times Timings
}

// DefaultFlags are the flags' values when the command line says nothing,
// each the default of the package that owns the fact; its Times are what
// a zero timing stands for when the manifest sets none.
func DefaultFlags() Flags {
	return Flags{
		Profile:     registry.DefaultProfile,
		HTTPHost:    "127.0.0.1",
		HTTPPort:    8741,
		MaxSessions: httpserver.DefaultMaxSessions,
		Times:       resolve(layer.Timings{}, Timings{}).values(),
	}
}

// Open checks the profile, locates the checkout that holds f.Repo and
// reads its manifest. log is the checkout's logger; linesDropped counts
// the log lines stderr lost (nil = none).
func Open(f Flags, log *zap.Logger, linesDropped func() uint64) (*Checkout, error) {
	if err := registry.ValidateProfile(f.Profile); err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	root, err := layer.FindCheckout(f.Repo) // "": the working directory
	if err != nil {
		return nil, err
	}
	m, err := layer.LoadManifest(root)
	if err != nil {
		return nil, err
	}
	profile := cmp.Or(f.Profile, registry.DefaultProfile) // --profile '': a variable left unset
	return &Checkout{Root: root, RootID: registry.DirectoryID(root), Manifest: m, Profile: profile, Strict: f.Strict, Registry: f.Registry,
		Logger: log, LogLinesDropped: linesDropped}, nil
}

// Fault is what kind of failure an error of this package is, for the exit
// code of the command that got it.
type Fault int

const (
	FaultInternal Fault = iota // anything else
	FaultUsage                 // the command line is wrong: --profile, a timing a flag set
	FaultContract              // the layer breaks its contract: its manifest (its timings too), --strict on a degraded index
	FaultMissing               // something needed is missing: the checkout, the board page
)

// FaultOf says what kind of failure err is.
func FaultOf(err error) Fault {
	var timings *TimingsError
	switch {
	case errors.Is(err, layer.ErrNoCheckout), errors.Is(err, ErrNoBoard):
		return FaultMissing
	case errors.Is(err, registry.ErrBadProfile), errors.As(err, &timings) && timings.Flagged:
		return FaultUsage
	case errors.As(err, &timings), errors.Is(err, layer.ErrDegraded), errors.Is(err, layer.ErrInvalidManifest):
		return FaultContract
	}
	return FaultInternal
}
