package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// WatchParent reports, once, that this process's parent is gone, until ctx
// ends. Windows never changes a process's parent pid and recycles pids
// quickly, so the parent is opened once and its handle waited on; a
// process with the parent's pid that started after this one is not the
// parent. A parent that cannot be opened is not watched (stdin's end still
// ends the session).
func WatchParent(ctx context.Context) <-chan string {
	gone := make(chan string, 1)
	parent := os.Getppid()
	reason := fmt.Sprintf("the parent process %d is gone", parent)
	h, err := openProcess(parent, windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			gone <- reason
		}
		return gone
	}
	parentStart, err := startOfHandle(h)
	self, selfErr := ProcessStart(os.Getpid())
	if errors.Is(err, ErrProcessEnded) || (err == nil && selfErr == nil && parentReplaced(parentStart, self)) {
		windows.CloseHandle(h)
		gone <- reason
		return gone
	}
	go func() {
		defer windows.CloseHandle(h)
		for ctx.Err() == nil {
			// A bounded wait, so that the goroutine ends soon after ctx.
			if ev, err := windows.WaitForSingleObject(h, 500); err != nil || ev == windows.WAIT_OBJECT_0 {
				gone <- reason
				return
			}
		}
	}()
	return gone
}
