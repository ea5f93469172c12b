package leasecheck

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
	host "github.com/majordomus-mcp/majordomus-mcp/registry/proc"
)

// world is one state of the system: the directory, the clock, the
// processes, the faults still to inject, and the history the invariants
// need (what the file operations saw done without right).
type world struct {
	now       time.Duration
	names     map[string]int
	inodes    map[int]*inode
	nextInode int
	blocked   bool
	lockedBy  int
	procs     []*proc
	faults    budget
	broken    []string
	mutation  *mutation
	trace     *[]string // nil unless a trace is being printed
}

// budget is how many faults of each kind may still be injected.
type budget struct{ crash, signal, stop, lease, dir int }

// onlyGarbage, when set, narrows what someone else writes to the lease
// to a garbage file (the mutations' search, for speed).
var onlyGarbage = false

func newWorld(n int, faults budget, m *mutation) *world {
	w := &world{names: map[string]int{}, inodes: map[int]*inode{}, lockedBy: -1, faults: faults, mutation: m}
	for i := range n {
		p := &proc{w: w, idx: i, name: fmt.Sprintf("p%d", i+1)}
		p.lf = &registry.LeaseFile{Path: leasePath, FS: procFS{p}}
		w.procs = append(w.procs, p)
		p.phase, p.since = electing, 0
	}
	return w
}

func (w *world) time() time.Time { return epoch.Add(w.now) }

func (w *world) say(format string, args ...any) {
	if w.trace != nil {
		*w.trace = append(*w.trace, fmt.Sprintf("    "+format, args...))
	}
}

// content is what the lease path (or another) holds, "" for nothing; a
// file whose bytes are empty reads as a single space.
func (w *world) content(path string) string {
	id, ok := w.names[path]
	if !ok {
		return ""
	}
	return " " + w.inodes[id].raw
}

// document is the lease p writes when it wins, as registry.NewLease
// writes it but for the random parts.
func (w *world) document(p *proc) registry.Lease {
	p.term++
	instance := fmt.Sprintf("%s.%d", p.name, p.term)
	return registry.Lease{
		Schema: registry.Schema, PID: 100 + p.idx, Instance: instance,
		Root: "/checkout", RepositoryID: repository, Profile: registry.DefaultProfile,
		StartedAt: w.time().Format("2006-01-02T15:04:05.000Z07:00"), BootID: "boot", ProcessStart: 1,
		Version: "1.0.0", Secret: instance, // fresh with every lease, as NewLease makes it
	}
}

// env is the host as the judge sees it: the simulated clock, and a pid
// alive exactly while its process is.
func (w *world) env() host.Env {
	return host.Env{
		Now:          w.time,
		BootID:       func() (string, error) { return "boot", nil },
		ProcessStart: func(int) (uint64, error) { return 1, nil },
		Signal0: func(pid int) error {
			if i := pid - 100; i >= 0 && i < len(w.procs) && w.procs[i].alive() {
				return nil
			}
			return syscall.ESRCH
		},
	}
}

// probe answers as the server holding the secret probed does (its
// instance's, as the world writes leases): leaseholder true while it
// serves, is not stopped, and has not learnt it lost.
func (w *world) probe(_ context.Context, t registry.ProbeTarget) registry.ProbeResult {
	if w.answers(t.Secret) {
		return registry.ProbeResult{Status: registry.ProbeOK}
	}
	return registry.ProbeResult{Status: registry.ProbeFailed, Reason: "connection refused"}
}

func (w *world) answers(instance string) bool {
	for _, p := range w.procs {
		if p.instance == instance && p.phase == serving && !p.stopped {
			return true
		}
	}
	return false
}

// A step is one move of the checker: a process performs its next file
// operation (or its next idle step), or a fault is injected.
type step struct {
	kind stepKind
	proc int
	arg  string
}

type stepKind string

const (
	stepRun    stepKind = "runs"
	stepGiveUp stepKind = "gives up waiting for the lock"
	stepCrash  stepKind = "is killed (kill -9)"
	stepSignal stepKind = "gets SIGTERM"
	stepStop   stepKind = "is stopped (SIGSTOP)"
	stepResume stepKind = "resumes (SIGCONT)"
	stepClock  stepKind = "the clock passes a grace"
	stepLease  stepKind = "someone else writes the lease:"
	stepDir    stepKind = "the lease directory turns"
)

// leaseWrites are what "someone else" may put at the lease path.
var leaseWrites = map[string]string{
	"garbage":   "not json\n",
	"empty":     "",
	"truncated": `{"schema":"majordomus-mcp-lease/v1","pid":`,
	"foreign":   `{"schema":"majordomus-mcp-lease/v1","pid":999,"instance":"foreign","repository_id":"` + repository + `","url":"http://foreign","started_at":"2026-01-01T00:00:00.000Z","boot_id":"boot","process_start":1}` + "\n",
}

// steps lists every step enabled now; faults only while budget remains.
func (w *world) steps() []step {
	var out []step
	for i, p := range w.procs {
		if !p.alive() {
			continue
		}
		switch {
		case p.stopped:
			out = append(out, step{stepResume, i, ""})
		case p.op != nil && p.pending == "lock" && w.lockedBy >= 0 && w.lockedBy != i:
			out = append(out, step{stepGiveUp, i, ""})
		case p.op != nil || p.idle(false):
			out = append(out, step{stepRun, i, ""})
		}
		if w.faults.crash > 0 {
			out = append(out, step{stepCrash, i, ""})
		}
		if w.faults.signal > 0 && p.op == nil && !p.stopped {
			out = append(out, step{stepSignal, i, ""})
		}
		if w.faults.stop > 0 && !p.stopped {
			out = append(out, step{stepStop, i, ""})
		}
	}
	if _, ok := w.nextDeadline(); ok {
		out = append(out, step{kind: stepClock})
	}
	if w.faults.lease > 0 {
		for _, k := range slices.Sorted(maps.Keys(leaseWrites)) {
			if !onlyGarbage || k == "garbage" {
				out = append(out, step{kind: stepLease, arg: k})
			}
		}
	}
	if w.faults.dir > 0 {
		out = append(out, step{kind: stepDir})
	}
	return out
}

// apply makes one step.
func (w *world) apply(s step) {
	var p *proc
	if s.kind != stepClock && s.kind != stepLease && s.kind != stepDir {
		p = w.procs[s.proc]
	}
	switch s.kind {
	case stepRun:
		if p.op != nil {
			p.resume()
		} else {
			p.idle(true)
		}
	case stepGiveUp:
		p.lockGivesUp = true
		p.resume()
	case stepCrash:
		w.faults.crash--
		w.crash(p)
	case stepSignal:
		w.faults.signal--
		if p.phase == holding || p.phase == serving {
			p.start(op{name: opRelease, then: exited})
		} else {
			p.phase = exited
		}
	case stepStop:
		w.faults.stop--
		p.stopped = true
	case stepResume:
		p.stopped = false
	case stepClock:
		w.now, _ = w.nextDeadline()
		w.say("the clock reads +%s", w.now)
	case stepLease:
		w.faults.lease--
		w.names[leasePath] = w.newInode(inode{raw: leaseWrites[s.arg], foreign: true})
		w.say("someone else writes a %s lease", s.arg)
	case stepDir:
		w.faults.dir--
		w.blocked = !w.blocked
		w.say("the lease directory is usable: %v", !w.blocked)
	}
	if w.trace != nil {
		w.say("  lease: %s; %s", w.describe(leasePath), w.procsLine())
	}
}

// crash kills p: it takes no further step, the system releases its lock,
// its files stay.
func (w *world) crash(p *proc) {
	p.dying = true
	if p.stop != nil {
		p.stop()
	}
	p.op, p.next, p.stop, p.pending = nil, nil, nil, ""
	if w.lockedBy == p.idx {
		w.lockedBy = -1
	}
	p.phase = killed
}

// close ends the processes' paused operations, as if they were all killed.
func (w *world) close() {
	for _, p := range w.procs {
		if p.stop != nil {
			p.dying = true
			p.stop()
		}
	}
}

// nextDeadline is the next instant at which a grace or a bound passes.
func (w *world) nextDeadline() (time.Duration, bool) {
	var ds []time.Duration
	for _, p := range w.procs {
		switch {
		case !p.alive():
		case p.phase == electing:
			ds = append(ds, p.since+bound)
			if p.waitOn != "" {
				ds = append(ds, p.waitUntil)
			}
		case p.phase == alone:
			ds = append(ds, p.retryAt)
		}
	}
	if id, ok := w.names[leasePath]; ok {
		if ends, ok := bindingEnds(w.inodes[id].raw); ok {
			ds = append(ds, ends)
		}
	}
	best, ok := time.Duration(0), false
	for _, d := range ds {
		if d > w.now && (!ok || d < best) {
			best, ok = d, true
		}
	}
	return best, ok
}

// bindingEnds is when a lease without a URL, raw, stops being binding.
func bindingEnds(raw string) (time.Duration, bool) {
	if e, ok := bindingEndsOf.Load(raw); ok {
		return e.(time.Duration), e.(time.Duration) >= 0
	}
	ends := time.Duration(-1)
	if doc, err := registry.Decode([]byte(raw)); err == nil && !doc.HasURL() {
		if t, err := time.Parse(time.RFC3339, doc.StartedAt); err == nil {
			ends = t.Sub(epoch) + bindGrace
		}
	}
	bindingEndsOf.Store(raw, ends)
	return ends, ends >= 0
}

var bindingEndsOf sync.Map

// key is the state's identity for the search: everything that decides
// what may happen next, with inodes numbered canonically. The processes
// run the same code, so states that differ only by their names are one:
// the key is the least over every renaming.
func (w *world) key() string {
	best := ""
	for _, perm := range permutations(len(w.procs)) {
		if k := w.keyAs(perm); best == "" || k < best {
			best = k
		}
	}
	return best
}

// keyAs is the key with process i named perm[i].
func (w *world) keyAs(perm []int) string {
	rename := renamer(perm)
	var b strings.Builder
	canon := map[int]int{}
	id := func(i int) int {
		if i == 0 {
			return 0
		}
		if _, ok := canon[i]; !ok {
			canon[i] = len(canon) + 1
		}
		return canon[i]
	}
	renamed := map[string]string{}
	for n := range w.names {
		renamed[rename(n)] = n
	}
	lock := w.lockedBy
	if lock >= 0 {
		lock = perm[lock]
	}
	fmt.Fprintf(&b, "t=%d blocked=%v lock=%d faults=%v broken=%d\n", w.now, w.blocked, lock, w.faults, len(w.broken))
	for _, n := range slices.Sorted(maps.Keys(renamed)) {
		fmt.Fprintf(&b, "%s=%d\n", n, id(w.names[renamed[n]]))
	}
	byNew := make([]*proc, len(w.procs))
	for i, j := range perm {
		byNew[j] = w.procs[i]
	}
	for _, p := range byNew {
		fmt.Fprintf(&b, "%s r=%v s=%v t=%d i=%s u=%s seen=%q br=%s since=%d busy=%d wait=%q/%d retry=%d app=%d\n",
			p.phase, p.rejoining, p.stopped, p.term, rename(p.instance), rename(p.url), rename(p.seen), rename(p.bridgedTo),
			p.since, p.busySince.UnixMilli(), rename(p.waitOn), p.waitUntil, p.retryAt, id(p.appendTo))
		if p.op != nil {
			fmt.Fprintf(&b, "  op %s %q %s %s pending %s\n", p.op.name, rename(p.op.judged), p.op.then, rename(strings.Join(p.calls, ";")), p.pending)
		}
	}
	ids := slices.SortedFunc(maps.Keys(canon), func(a, b int) int { return canon[a] - canon[b] })
	for _, real := range ids {
		in := w.inodes[real]
		fmt.Fprintf(&b, "#%d %q %v %s %q\n", canon[real], rename(in.raw), in.foreign, rename(in.writer), rename(strings.Join(in.records, "")))
	}
	return b.String()
}

// renamer renames process i perm[i] in any text of a key.
func renamer(perm []int) func(string) string {
	k := fmt.Sprint(perm)
	if r, ok := renamers.Load(k); ok {
		return r.(*strings.Replacer).Replace
	}
	var pairs []string
	for i, j := range perm {
		pairs = append(pairs, fmt.Sprintf("p%d", i+1), fmt.Sprintf("q%d", j+1),
			fmt.Sprintf(`"pid":%d`, 100+i), fmt.Sprintf(`"pid":q%d`, j))
	}
	r, _ := renamers.LoadOrStore(k, strings.NewReplacer(pairs...))
	return r.(*strings.Replacer).Replace
}

var renamers sync.Map

// permutations are every order of 0…n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := range n {
			q := append(slices.Clone(p[:i]), n-1)
			out = append(out, append(q, p[i:]...))
		}
	}
	return out
}

func (w *world) procsLine() string {
	parts := make([]string, len(w.procs))
	for i, p := range w.procs {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}
