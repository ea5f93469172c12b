package scenarios

import (
	"strings"
	"testing"
)

// The first log line of every client says what the process does before
// any probe — which lease it reads, and that its handshake is answered
// within a second whatever the lease holds — so that a host that gives up
// early leaves a log that says why (issue 25, point 6).
func TestTheFirstLogLineSaysWhatTheProcessDoes(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := shared(t, dir)
	attached(t, b)
	for _, p := range [][]string{a.Logs(), b.Logs()} {
		first := p[0]
		for _, want := range []string{`"level":"info"`, "reading the lease at " + leasePath(dir), "answered here after 50ms"} {
			if !strings.Contains(first, want) {
				t.Fatalf("the first log line lacks %q: %s", want, first)
			}
		}
	}
}
