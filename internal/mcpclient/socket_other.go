//go:build !unix

package mcpclient

import (
	"errors"
	"os"
)

// socketPair: socket_unix.go makes them where the system has them.
func socketPair() (host, child *os.File, err error) {
	return nil, nil, errors.New("no socket pairs for a child's stdio on this system")
}
