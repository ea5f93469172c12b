package main

import (
	"context"
	"fmt"
	"os"

	"github.com/majordomus-mcp/majordomus-mcp/internal/demo"
)

// runDemo runs the scripted session of internal/demo with this binary.
func runDemo(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("demo takes no arguments")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	return demo.Run(ctx, env.stdout, self)
}
