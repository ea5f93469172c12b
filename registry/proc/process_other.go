//go:build !linux && !darwin && !windows

package proc

import (
	"fmt"
	"math"
	"runtime"
)

// On other systems nothing about processes is known: a process cannot
// write a lease others could judge, so the election serves its client
// alone with this reason, and the fleet inventory is incomplete.
var errUnsupportedOS = fmt.Errorf("process identity is unsupported on %s", runtime.GOOS)

// ProcessStart is unsupported here.
func ProcessStart(pid int) (uint64, error) { return 0, errUnsupportedOS }

// BootID is unsupported here.
func BootID() (string, error) { return "", errUnsupportedOS }

// maxPID is the largest pid a process can have (a pid_t, where there is one): a larger one
// would be cut to another by the system call.
const maxPID = math.MaxInt32

// BootTicks is unsupported here.
func BootTicks() (uint64, error) { return 0, errUnsupportedOS }

func signal0(pid int) error { return errUnsupportedOS }

func observeListening(names []string) (Listening, error) {
	return Listening{}, fmt.Errorf("%w: %v", ErrListingUnavailable, errUnsupportedOS)
}
