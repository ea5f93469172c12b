//go:build unix

package scenarios

import "syscall"

func init() {
	unreadableStates["fifo"] = func(p string) error { return syscall.Mkfifo(p, 0o600) }
}
