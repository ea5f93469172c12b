//go:build unix

package mcpclient

import (
	"os"
	"syscall"
)

// socketPair is a connected pair of stream sockets: the host's end,
// non-blocking (so that it takes deadlines), and the child's, blocking (as
// Node leaves it).
func socketPair() (host, child *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "host's end"), os.NewFile(uintptr(fds[1]), "child's end"), nil
}
