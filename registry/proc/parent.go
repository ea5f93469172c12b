package proc

import (
	"context"
	"fmt"
	"os"
	"time"
)

// watchParentPid reports, once, that parent is no longer this process's
// parent, until ctx ends: on Unix an orphan is adopted (by init or a
// subreaper), so its parent pid changes. It is read every second, which
// wakes an idle process as often: Linux watches its parent's pidfd instead
// (parent_linux.go), and comes here only where that is refused.
func watchParentPid(ctx context.Context, parent int) <-chan string {
	gone := make(chan string, 1)
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if os.Getppid() != parent {
					gone <- parentGone(parent)
					return
				}
			}
		}
	}()
	return gone
}

func parentGone(parent int) string { return fmt.Sprintf("the parent process %d is gone", parent) }
