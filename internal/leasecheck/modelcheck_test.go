package leasecheck

import (
	"flag"
	"testing"
	"time"
)

var long = flag.Bool("long", false, "model-check the lease protocol to a deeper bound")

// defaultBounds run in CI; longBounds with -long.
var (
	defaultBounds = bounds{procs: 3, depth: 6, faults: budget{crash: 1, signal: 1, stop: 1, lease: 1, dir: 2}, liveness: true}
	longBounds    = bounds{procs: 3, depth: 9, faults: budget{crash: 1, signal: 1, stop: 1, lease: 1, dir: 2}, liveness: true}
)

func TestModelCheck(t *testing.T) {
	b := defaultBounds
	if *long {
		b = longBounds
	}
	began := time.Now()
	res := explore(b, nil)
	t.Logf("explored %d states and %d transitions (every interleaving of %s; deepest state %d steps) in %s",
		res.states, res.transitions, b, res.depth, time.Since(began).Round(time.Millisecond))
	if res.violation != "" {
		t.Fatalf("%s\nshortest trace:\n%s", res.violation, replay(b, nil, res.trace))
	}
}

func TestModelCheckFindsEachMutation(t *testing.T) {
	onlyGarbage = true
	t.Cleanup(func() { onlyGarbage = false })
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			b := bounds{procs: 2, depth: 14, faults: m.faults, liveness: m.settle}
			res := explore(b, &m)
			if res.violation == "" {
				t.Fatalf("not caught within %s (%d states)", b, res.states)
			}
			t.Logf("caught after %d states: %s\nshortest trace, %d steps:\n%s",
				res.states, res.violation, len(res.trace), replay(b, &m, res.trace))
		})
	}
}
