package main

import (
	"context"
	"errors"

	"github.com/majordomus-mcp/majordomus-mcp/internal/node"
)

// runBoard prints a one-time link to the checkout's board page and opens
// it where a desktop exists (internal/node does it all).
func runBoard(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("board takes no arguments")
	}
	co, err := findCheckout(env)
	if err != nil {
		return err
	}
	err = node.OpenBoard(ctx, co, node.BoardOptions{Times: env.opts.times, Open: !env.opts.noOpen, Out: env.stdout})
	if errors.Is(err, node.ErrNoBoard) {
		return withCode(exitMissing, err)
	}
	return err
}
