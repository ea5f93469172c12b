package proc

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// WatchParent reports, once, that this process's parent is gone, until ctx
// ends: a host killed hard leaves its children behind with stdin still
// open. The parent's pidfd becomes readable when it exits, and the
// runtime's poller hears it, so an idle process is never woken to look
// (issue 33's idle cost). Where pidfd_open is refused (Linux before 5.3, a
// sandbox), the parent pid is read every second instead.
func WatchParent(ctx context.Context) <-chan string {
	parent := os.Getppid()
	fd, err := unix.PidfdOpen(parent, unix.PIDFD_NONBLOCK)
	if err != nil {
		return watchParentPid(ctx, parent)
	}
	gone := make(chan string, 1)
	if os.Getppid() != parent { // it left before its pidfd was opened: that pid may be another's now
		unix.Close(fd)
		gone <- parentGone(parent)
		return gone
	}
	pidfd := os.NewFile(uintptr(fd), "parent pidfd") // non-blocking: the runtime's poller watches it
	conn, err := pidfd.SyscallConn()
	if err != nil {
		pidfd.Close()
		return watchParentPid(ctx, parent)
	}
	go func() {
		defer context.AfterFunc(ctx, func() { pidfd.Close() })() // ends the wait below
		err := conn.Read(func(fd uintptr) bool {
			// Asked, not assumed: an exit heard before this wait began is
			// one the wait would never hear again.
			ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(ready, 0)
			return n > 0
		})
		if err == nil {
			gone <- parentGone(parent)
		}
		pidfd.Close()
	}()
	return gone
}
