package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// release is this build's release version.
const release = "0.1.0"

// version is the release, with the VCS revision when the build recorded one.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return release
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return release + "+" + s.Value[:12]
		}
	}
	return release
}

func runVersion(_ context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("version takes no arguments")
	}
	_, err := fmt.Fprintln(env.stdout, "majordomus-mcp", version())
	return err
}
