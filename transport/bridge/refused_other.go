//go:build !windows

package bridge

import (
	"errors"
	"syscall"
)

// refused reports whether err says that nothing listens at the server's
// port.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
