//go:build !race

package leasecheck

// Not built with the race detector: its search steps one process at a
// time, so there is nothing for the detector to find, and its memory for
// each of the search's millions of short-lived coroutines runs to tens of
// GiB where the plain run takes about a hundred MiB.

import (
	"sync"
	"testing"
)

// TestModelCheckRealCodeAtTheMutationsBounds checks the product's code
// within the bounds each mutation is caught in: TestModelCheck's bound is
// too shallow to reach those defects (a Journal.Replace or a
// LeaseFile.Release that checks no instance passes it), so without this
// the catch would prove only that the check finds the test's copy of a
// defect, never that the product's code has none there.
func TestModelCheckRealCodeAtTheMutationsBounds(t *testing.T) {
	onlyGarbage = true
	t.Cleanup(func() { onlyGarbage = false })
	var wg sync.WaitGroup
	checked := map[bounds]bool{}
	for _, m := range mutations {
		b := bounds{procs: 2, depth: 14, faults: m.faults, liveness: m.settle}
		if checked[b] {
			continue
		}
		checked[b] = true
		wg.Go(func() {
			res := explore(b, nil)
			if res.violation != "" {
				t.Errorf("within %s: %s\nshortest trace:\n%s", b, res.violation, replay(b, nil, res.trace))
				return
			}
			t.Logf("no violation in %d states (%s)", res.states, b)
		})
	}
	wg.Wait()
}
