package proc

import (
	"context"
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// WatchParent reports, once, that this process's parent is gone, until ctx
// ends. Windows never changes a process's parent pid and recycles pids
// quickly, so the parent is opened once and its handle waited on, with
// nothing but its end or ctx's to wake the wait. A parent
// already gone when this is called — it cannot be opened, it has ended, or
// its pid is now a process that started after this one (a launcher that
// spawned this process and exited) — is not watched, as on Unix, where
// such an orphan's parent pid is already its adopter's: stdin's end still
// ends the session. Only a parent seen alive here and ending later is
// reported.
func WatchParent(ctx context.Context) <-chan string {
	gone := make(chan string, 1)
	parent := os.Getppid()
	h, err := openProcess(parent, windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION)
	if err != nil {
		return gone
	}
	parentStart, err := startOfHandle(h)
	self, selfErr := ProcessStart(os.Getpid())
	if errors.Is(err, ErrProcessEnded) || (err == nil && selfErr == nil && parentReplaced(parentStart, self)) {
		windows.CloseHandle(h)
		return gone
	}
	// ctx's end is an event too, so that one wait hears either and an idle
	// process is never woken to look (issue 33's idle cost).
	ended, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil { // out of handles: stdin's end still ends the session
		windows.CloseHandle(h)
		return gone
	}
	reason := parentGone(parent)
	go func() {
		defer windows.CloseHandle(h)
		set := make(chan struct{})
		stop := context.AfterFunc(ctx, func() { windows.SetEvent(ended); close(set) })
		ev, err := windows.WaitForMultipleObjects([]windows.Handle{h, ended}, false, windows.INFINITE)
		if !stop() {
			<-set // it was set: only then may its handle be closed
		}
		windows.CloseHandle(ended)
		if err != nil || ev == windows.WAIT_OBJECT_0 {
			gone <- reason
		}
	}()
	return gone
}
