package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"majordomus-mcp/internal/release"
	"majordomus-mcp/layer"
	"majordomus-mcp/surface"
)

// checkout is the checkout this process serves. Its root and manifest are
// read at start (their errors keep their exit codes, 12 and 10); its index
// and MCP surface are built only when this process serves a client itself,
// so a process that attaches to a shared server starts in milliseconds and a
// bridge whose layer is broken can still attach.
type checkout struct {
	root     string
	manifest layer.Manifest
	strict   bool
	log      *zap.Logger
	process  *processInfo
	registry string // --registry, for fleet inventories

	mu     sync.Mutex
	served *served // nil until load succeeds
}

// served is a loaded layer with the MCP surface over it.
type served struct {
	layer   *layer.Layer
	surface *surface.Surface
}

// findCheckout locates the checkout from --repo (or the working directory)
// and reads its manifest.
func findCheckout(env *environment, process *processInfo) (*checkout, error) {
	start := env.opts.repo
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, withCode(exitInternal, fmt.Errorf("reading the working directory: %w", err))
		}
		start = wd
	}
	root, err := layer.FindCheckout(start)
	if err != nil {
		return nil, withCode(exitMissing, err)
	}
	m, err := layer.LoadManifest(root)
	if err != nil {
		return nil, withCode(exitContract, err)
	}
	return &checkout{root: root, manifest: m, strict: env.opts.strict, log: env.log, process: process, registry: env.opts.registry}, nil
}

// load builds the index and the MCP surface once, and watches the layer
// until life ends — the process's lifetime, not the caller's: a server is
// often started under a context that bounds only its start. A failure is
// returned with its exit code and not cached: a later call tries again.
func (c *checkout) load(life context.Context) (*served, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.served != nil {
		return c.served, nil
	}
	lay, err := layer.Open(layer.Config{Root: c.root, Strict: c.strict, Logger: c.log.Named("layer")})
	switch {
	case errors.Is(err, layer.ErrDegraded), errors.Is(err, layer.ErrInvalidManifest):
		return nil, withCode(exitContract, err)
	case err != nil:
		return nil, withCode(exitInternal, err)
	}
	surf := surface.New(surface.Config{
		Layer:   lay,
		Version: release.Version(),
		Process: c.process.describe,
		Fleet:   c.inventory,
		Logger:  c.log.Named("surface"),
	})
	go func() {
		if err := lay.Watch(life, surf.IndexChanged); err != nil {
			c.log.Warn("watching the layer failed; changes are not picked up", zap.Error(err))
		}
	}()
	c.served = &served{layer: lay, surface: surf}
	return c.served, nil
}

// processInfo is what this process says of itself in majordomus_server and
// in the instructions. It changes as the process moves through its states.
type processInfo struct {
	role        atomic.Pointer[string]
	url         atomic.Pointer[string]
	leaseholder atomic.Bool
	lost        atomic.Bool
	leasePath   string
	profile     string
}

func newProcessInfo(role, leasePath, profile string) *processInfo {
	p := &processInfo{leasePath: leasePath, profile: profile}
	p.setRole(role)
	p.setURL("")
	return p
}

func (p *processInfo) setRole(role string) { p.role.Store(&role) }
func (p *processInfo) setURL(url string)   { p.url.Store(&url) }

// findingLost is what a server that lost its lease says of itself.
const findingLost = "this process no longer holds the lease: it serves the sessions it already had and takes on no new ones; what is described above is another process"

func (p *processInfo) describe() surface.Process {
	d := surface.Process{
		Role:        *p.role.Load(),
		URL:         *p.url.Load(),
		Leaseholder: p.leaseholder.Load(),
		LeasePath:   p.leasePath,
		Profile:     p.profile,
	}
	if p.lost.Load() {
		d.Findings = []string{findingLost}
	}
	return d
}
