//go:build unix

package node

import (
	"os"
	"syscall"
)

// unreadableStateCases are what only Unix plants where the shared state
// should be: a named pipe (never opened, so never waited on) and a
// symbolic link (never followed).
var unreadableStateCases = []stateCase{
	{name: "a named pipe", plant: func(p string) error { return syscall.Mkfifo(p, 0o600) }, aside: "it is a special file"},
	{name: "a symbolic link", plant: func(p string) error { return os.Symlink(os.DevNull, p) }, aside: "it is a symbolic link"},
}
