package leasecheck

import (
	"fmt"
	"strings"
)

// bounds are how far the search goes.
type bounds struct {
	procs    int
	depth    int // steps from the initial state
	faults   budget
	liveness bool // settle every new state (L1, L2)
}

func (b bounds) String() string {
	f := b.faults
	return fmt.Sprintf("%d processes, depth %d, at most %d kill -9, %d SIGTERM, %d SIGSTOP, %d lease written by someone else, %d directory changes",
		b.procs, b.depth, f.crash, f.signal, f.stop, f.lease, f.dir)
}

// node is a state found by the search, known by the steps that reach it
// from the initial state (the processes' coroutines cannot be copied, so
// a state is rebuilt by replaying them).
type node struct {
	parent *node
	step   step
	depth  int
}

func (n *node) path() []step {
	var out []step
	for ; n.parent != nil; n = n.parent {
		out = append(out, n.step)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// result is what a search explored, and the first violation it met.
type result struct {
	states, transitions, depth int
	violation                  string
	trace                      []step
}

// explore searches breadth first, so that the first violation found has a
// shortest trace: every state reachable within the bounds is visited once
// (states are identified by world.key), and checked.
func explore(b bounds, m *mutation) result {
	build := func(path []step) *world { // close it after use
		w := newWorld(b.procs, b.faults, m)
		for _, s := range path {
			w.apply(s)
		}
		return w
	}
	root := &node{}
	w0 := build(nil)
	seen := map[string]bool{w0.key(): true}
	res := result{states: 1}
	v := violated(w0, b)
	w0.close()
	if v != "" {
		return result{states: 1, violation: v}
	}
	queue := []*node{root}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.depth >= b.depth {
			continue
		}
		path := n.path()
		w := build(path)
		count := len(w.steps())
		w.close()
		for i := range count {
			w := build(path)
			s := w.steps()[i]
			w.apply(s)
			res.transitions++
			k := w.key()
			if seen[k] {
				w.close()
				continue
			}
			seen[k] = true
			res.states++
			child := &node{parent: n, step: s, depth: n.depth + 1}
			res.depth = max(res.depth, child.depth)
			v := violated(w, b)
			w.close()
			if v != "" {
				res.violation, res.trace = v, child.path()
				return res
			}
			queue = append(queue, child)
		}
	}
	return res
}

// violated checks every invariant on w; settling (L1, L2) consumes it.
func violated(w *world, b bounds) string {
	for _, inv := range safety {
		if v := inv.check(w); v != "" {
			return inv.name + ": " + v
		}
	}
	if !b.liveness {
		return ""
	}
	l1, l2 := settle(w)
	switch {
	case l1 != "":
		return "L1 every client served within the election bound: " + l1
	case l2 != "":
		return "L2 every client on one board: " + l2
	}
	return ""
}

// replay prints the trace: each step, what each file operation did and
// found, the judge's verdicts, and the lease and processes after it.
func replay(b bounds, m *mutation, path []step) string {
	var lines []string
	w := newWorld(b.procs, b.faults, m)
	w.trace = &lines
	for i, s := range path {
		lines = append(lines, fmt.Sprintf("%2d. %s", i+1, s.describe(w)))
		w.apply(s)
	}
	w.close()
	return strings.Join(lines, "\n")
}

func (s step) describe(w *world) string {
	switch s.kind {
	case stepClock, stepDir:
		return string(s.kind)
	case stepLease:
		return string(s.kind) + " " + s.arg
	}
	p := w.procs[s.proc]
	if s.kind == stepRun && p.pending != "" {
		return fmt.Sprintf("%s (%s) %s", p.name, p.op.name, p.pending)
	}
	return p.name + " " + string(s.kind)
}
