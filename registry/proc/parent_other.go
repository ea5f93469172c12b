//go:build !unix && !windows

package proc

import "context"

// WatchParent cannot watch the parent here: only stdin's end ends the
// session.
func WatchParent(context.Context) <-chan string { return make(chan string) }
