//go:build !linux && !darwin

package layer

import "io/fs"

// stampOf gives no stamp: a Windows file's attributes carry no change time
// that a program cannot set back, and no file identity, so nothing proves a
// file unchanged and the watcher rebuilds at its start.
func stampOf(fs.FileInfo) (stamp, bool) { return stamp{}, false }
