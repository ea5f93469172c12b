package bridge

import (
	"errors"

	"golang.org/x/sys/windows"
)

// refused reports whether err says that nothing listens at the server's
// port: Windows refuses with WSAECONNREFUSED, which syscall.ECONNREFUSED
// (an errno Go makes up there) never matches.
func refused(err error) bool { return errors.Is(err, windows.WSAECONNREFUSED) }
