//go:build !linux

package layer

// watchLimitHint says nothing more here: only Linux's inotify limits are
// known by their errors.
func watchLimitHint(error) string { return "" }
