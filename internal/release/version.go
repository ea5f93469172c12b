// Package release says which build of majordomus-mcp this is: its release
// number, the version it reports to clients, and the revision a server
// records in the fleet registry. Everything here is read from the binary
// itself (its build information and Go build ID), never from the host.
package release

import (
	"runtime/debug"
	"sync"
)

// Number is this build's release version.
const Number = "0.1.0"

// Version is the release, with the VCS revision when the build recorded one.
// It is read once: a leaseholder says it in every probe's answer, and
// reading the build information parses it again each time.
var Version = sync.OnceValue(func() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Number
	}
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return Number + "+" + s.Value[:12]
		}
	}
	return Number
})
