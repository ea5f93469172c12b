package registry

import (
	"fmt"
	"runtime"
)

func observeListening(names []string) (Listening, error) {
	return Listening{}, fmt.Errorf("%w: not yet observed on %s", ErrListingUnavailable, runtime.GOOS)
}
