package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// findCheckout locates the checkout from --repo (or the working directory)
// and reads its manifest, for the profile of --profile.
func findCheckout(env *environment) (*node.Checkout, error) {
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
	return &node.Checkout{
		Root:     root,
		Manifest: m,
		Profile:  env.opts.profile,
		Strict:   env.opts.strict,
		Registry: env.opts.registry,
		Logger:   env.log,

		LogLinesDropped: env.logs.Dropped,
	}, nil
}

// nodeError gives what a node could not serve its exit code: timings that
// cannot work together exit 2 when a flag set one of them, a layer that
// breaks its contract (its manifest's timings too) exits 10, anything else
// 13.
func nodeError(err error) error {
	var timings *node.TimingsError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &timings) && timings.Flagged:
		return withCode(exitUsage, err)
	case errors.As(err, &timings), errors.Is(err, layer.ErrDegraded), errors.Is(err, layer.ErrInvalidManifest):
		return withCode(exitContract, err)
	}
	return withCode(exitInternal, err)
}
