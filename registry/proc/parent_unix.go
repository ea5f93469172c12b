//go:build unix && !linux

package proc

import (
	"context"
	"os"
)

// WatchParent reports, once, that this process's parent is gone, until ctx
// ends: a host killed hard leaves its children behind with stdin still
// open. An orphan is adopted, so its parent pid changes (watchParentPid).
func WatchParent(ctx context.Context) <-chan string { return watchParentPid(ctx, os.Getppid()) }
