package main

import (
	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// findCheckout locates the checkout from --repo (or the working directory)
// and reads its manifest, for the profile of --profile.
func findCheckout(env *environment) (*node.Checkout, error) {
	co, err := node.FindCheckout(env.opts.repo)
	if err != nil {
		return nil, nodeError(err)
	}
	co.Profile, co.Strict, co.Registry = env.opts.profile, env.opts.strict, env.opts.registry
	co.Logger, co.LogLinesDropped = env.log, env.logs.Dropped
	return co, nil
}
