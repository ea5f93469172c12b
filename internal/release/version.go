// Package release says which build of majordomus-mcp this is: its release
// number, the version it reports to clients, and the revision a server
// records in the fleet registry. Everything here is read from the binary
// itself (its build information and Go build ID), never from the host.
package release

import "runtime/debug"

// Number is this build's release version.
const Number = "0.1.0"

// Version is the release, with the VCS revision when the build recorded one.
func Version() string {
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
}
