package leasecheck

import (
	"fmt"
	"strings"
	"time"
)

// The invariants of the rule (see the package doc), each a function of one state that returns
// what is wrong, or "".

// safety are the invariants every reachable state must keep.
var safety = []struct {
	name  string
	check func(*world) string
}{
	{"S1 at most one unfenced leaseholder", atMostOneUnfencedLeaseholder},
	{"S2 no lease removed or replaced but the one judged", onlyJudgedLeasesReplaced},
	{"S3 the state is the leaseholder's", stateIsTheLeaseholders},
	{"S4 one backend per client", oneBackendPerClient},
}

// S1: of the processes whose server says it holds the lease, at most one
// is not fenced; a fenced one's lease is not in the file and its next
// step finds that out.
func atMostOneUnfencedLeaseholder(w *world) string {
	var unfenced []string
	for _, p := range w.procs {
		if p.believesLeaseholder() && (w.leaseCarries(p.instance) || !p.willNotice()) {
			unfenced = append(unfenced, p.name)
		}
	}
	if len(unfenced) > 1 {
		return fmt.Sprintf("%s all act as the leaseholder, and the lease is %s", strings.Join(unfenced, " and "), w.describe(leasePath))
	}
	return ""
}

// S2: no process removed or replaced a lease naming another owner than
// the one it judged (the file operations record it as it happens).
func onlyJudgedLeasesReplaced(w *world) string { return brokenWith(w, "S2") }

// S3: the state file was replaced only by the process the lease named,
// and holds no record but that process's: a record appended by a fenced
// process lands in a file nobody reads.
func stateIsTheLeaseholders(w *world) string {
	if s := brokenWith(w, "S3"); s != "" {
		return s
	}
	id, ok := w.names[statePath]
	if !ok {
		return ""
	}
	in := w.inodes[id]
	for _, r := range in.records {
		if r != "record by "+in.writer+"\n" {
			return fmt.Sprintf("the state put in place by %s holds %q", in.writer, r)
		}
	}
	return ""
}

// S4: a client is served by its own server, through a bridge, or alone:
// never by two of them.
func oneBackendPerClient(w *world) string {
	for _, p := range w.procs {
		if (p.phase == attached || p.phase == alone || p.phase == electing && p.rejoining) && p.instance != "" {
			return fmt.Sprintf("%s is %s and still runs the server of %s", p.name, p.phase, p.instance)
		}
	}
	return ""
}

func brokenWith(w *world, prefix string) string {
	for _, b := range w.broken {
		if strings.HasPrefix(b, prefix+":") {
			return b
		}
	}
	return ""
}

// settle checks L1 and L2 from w, which it consumes: from now on the
// processes keep taking steps (the stopped ones resume), the directory is
// usable, nothing crashes and nothing writes the lease but the processes,
// and the clock advances only when no process has a step to take.
//
// L1: every live client is served (by the leaseholder, a bridge, or alone)
// within the election bound. L2: one retry period later, every live client
// is on one board: one leaseholder, the lease naming it, every other
// client bridged to it.
func settle(w *world) (l1, l2 string) {
	start := w.now
	w.blocked, w.faults = false, budget{}
	for _, p := range w.procs {
		p.stopped = false
	}
	unserved := func() string {
		for _, p := range w.procs {
			if p.alive() && !p.served() {
				return p.String()
			}
		}
		return ""
	}
	servedBy := time.Duration(-1)
	for turn := range 400 {
		if servedBy < 0 && unserved() == "" {
			servedBy = w.now - start
		}
		s, ok := w.fairStep(turn)
		if !ok {
			break
		}
		w.apply(s)
	}
	if servedBy < 0 || servedBy > bound {
		l1 = fmt.Sprintf("a client is not served within %s: %s", bound, unserved())
	}
	return l1, onOneBoard(w)
}

// fairStep is the next step of the settling run: the processes' in turn,
// one waiting for the lock only when no other can move, else the clock.
func (w *world) fairStep(turn int) (step, bool) {
	steps := w.steps()
	for _, kind := range []stepKind{stepRun, stepGiveUp, stepClock} {
		var first *step
		for _, s := range steps {
			if s.kind != kind {
				continue
			}
			if first == nil || (first.proc < turn%len(w.procs) && s.proc >= turn%len(w.procs)) {
				first = &s
			}
		}
		if first != nil {
			return *first, true
		}
	}
	return step{}, false
}

// onOneBoard is L2, on a settled world.
func onOneBoard(w *world) string {
	var holder string
	for _, p := range w.procs {
		if p.alive() && p.phase == serving {
			if holder != "" || !w.leaseCarries(p.instance) {
				return fmt.Sprintf("after settling: %s; the lease is %s", w.procsLine(), w.describe(leasePath))
			}
			holder = p.instance
		}
	}
	for _, p := range w.procs {
		if p.alive() && p.phase != serving && (p.phase != attached || p.bridgedTo != holder) {
			return fmt.Sprintf("after settling, %s is not on the board: %s; the lease is %s", p.name, w.procsLine(), w.describe(leasePath))
		}
	}
	return ""
}
