//go:build unix

package proc

import (
	"context"
	"fmt"
	"os"
	"time"
)

// WatchParent reports, once, that this process's parent is gone, until ctx
// ends: a host killed hard leaves its children behind with stdin still
// open. On Unix an orphan is adopted (by init or a subreaper), so its
// parent pid changes; it is read every second.
func WatchParent(ctx context.Context) <-chan string {
	gone := make(chan string, 1)
	parent := os.Getppid()
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if os.Getppid() != parent {
					gone <- fmt.Sprintf("the parent process %d is gone", parent)
					return
				}
			}
		}
	}()
	return gone
}
