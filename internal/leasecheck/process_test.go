package leasecheck

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
)

// The model of one process, in one place: its phase (the machine's states
// that matter to the lease), the operation it has in flight (real registry
// code, paused at each file operation), and what it does when an operation
// ends (the machine's pure decisions, and the reactions configure.go gives
// the triggers in Electing).

type phase string

const (
	electing phase = "electing"
	holding  phase = "holding"    // won the lease; its server keeps the state, starts and publishes
	serving  phase = "serving"    // the leaseholder, its URL published
	lost     phase = "lease-lost" // its server learnt the lease is not its own
	attached phase = "attached"   // bridged to another's server
	alone    phase = "alone"      // serves its client alone, and retries
	killed   phase = "killed"
	exited   phase = "exited"
)

type opName string

const (
	opObserve    opName = "observe"
	opAcquire    opName = "acquire"
	opTakeOver   opName = "take over"
	opPublish    opName = "publish"
	opWriteState opName = "replace the state"
	opAppend     opName = "append a record"
	opCheck      opName = "check the lease"
	opRelease    opName = "release"
)

// op is an operation in flight and what it is for.
type op struct {
	name   opName
	judged string // take over: the bytes judged unusable
	obs    registry.Observation
	then   phase // release: where the process goes after
}

// Timings are the product's defaults.
const (
	bindGrace  = registry.DefaultBindGrace
	busyGrace  = machine.DefaultBusyGrace
	bound      = machine.DefaultElectionBound
	joinRetry  = machine.DefaultJoinRetry
	repository = "0123456789abcdef0123456789abcdef"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type proc struct {
	w    *world
	idx  int
	name string

	phase     phase
	rejoining bool // electing from alone: its client is served alone meanwhile
	stopped   bool
	term      int    // leases created, to name instances
	instance  string // the lease it holds, or held until it learnt otherwise
	url       string
	seen      string // the lease it last saw while serving (its watch fires on change)
	bridgedTo string
	since     time.Duration // when its election began
	busySince time.Time
	waitOn    string // the lease it waits on (binding, busy), and until when
	waitUntil time.Duration
	retryAt   time.Duration
	appendTo  int // the state inode its journal appends to

	lf      *registry.LeaseFile
	journal *registry.Journal

	// The operation in flight, paused before its next file operation.
	op          *op
	calls       []string // what its file operations did so far
	pending     string
	lockGivesUp bool
	locked      bool // it has just taken the lock
	dying       bool
	next        func() (struct{}, bool)
	stop        func()
	yield       func(struct{}) bool
	obs         registry.Observation
	err         error
}

var errAbandoned = errors.New("abandoned")

func (p *proc) gone() bool { return p.dying }

// enter pauses the process before the file operation call; it resumes
// when the checker schedules it, and then performs it.
func (p *proc) enter(call string) error {
	if p.dying {
		return errGone
	}
	if p.locked {
		// Taking the lock moves right: nothing between it and the
		// operation after it is seen by another process, so the two are
		// one step.
		p.locked = false
	} else {
		p.pending = call
		if !p.yield(struct{}{}) {
			panic(errAbandoned)
		}
		p.pending = ""
	}
	p.calls = append(p.calls, call)
	p.w.say("%s: %s", p.name, call)
	return nil
}

// note records what the last file operation found.
func (p *proc) note(found string) { p.calls[len(p.calls)-1] += " → " + found }

// start begins o and runs it to its first file operation.
func (p *proc) start(o op) {
	p.op, p.calls, p.obs, p.err = &o, nil, registry.Observation{}, nil
	p.w.say("%s begins to %s", p.name, o.name)
	p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
		p.yield = yield
		defer func() {
			if r := recover(); r != nil && r != errAbandoned {
				panic(r)
			}
		}()
		p.run(o)
	})
	p.resume()
}

// resume performs the pending file operation and runs on to the next one,
// or to the end of the operation, which the model then reacts to.
func (p *proc) resume() {
	if _, paused := p.next(); paused {
		return
	}
	p.stop()
	o := *p.op
	p.op, p.next, p.stop, p.calls = nil, nil, nil, nil
	p.after(o)
}

// run is the operation itself: the product's code, or a mutation's copy.
func (p *proc) run(o op) {
	if m := p.w.mutation; m != nil && m.op == o.name {
		p.err = m.run(p, o)
		return
	}
	switch o.name {
	case opObserve:
		p.obs, p.err = p.observer().Observe(context.Background())
	case opAcquire:
		p.err = p.lf.Acquire(p.w.document(p))
	case opTakeOver:
		_, p.err = p.lf.TakeOver(o.obs)
	case opPublish:
		p.err = p.lf.Publish(p.url)
	case opWriteState:
		p.journal = &registry.Journal{Lease: leasePath, Instance: p.instance, FS: procFS{p}}
		p.err = p.journal.Replace([]byte("state\n"))
	case opAppend:
		p.err = p.journal.Append([]byte("record by " + p.instance + "\n"))
	case opCheck:
		p.obs.Snapshot = procFS{p}.Read(leasePath)
	case opRelease:
		p.err = p.lf.Release()
	}
}

func (p *proc) observer() *registry.Observer {
	return &registry.Observer{
		Path:    leasePath,
		Timings: registry.Timings{BindGrace: bindGrace},
		Probe:   p.w.probe, Env: p.w.env(), FS: procFS{p},
	}
}

// after is the model's reaction to the end of an operation.
func (p *proc) after(o op) {
	w := p.w
	switch o.name {
	case opObserve:
		p.judged(p.obs)
	case opAcquire:
		switch {
		case p.err == nil:
			held, _ := p.lf.Held()
			p.phase, p.rejoining, p.instance, p.url = holding, false, held.Instance, "http://"+held.Instance
			p.start(op{name: opWriteState}) // the server loads and keeps the state, then publishes
		case errors.Is(p.err, registry.ErrLeaseExists):
			p.start(op{name: opObserve}) // outraced: read the winner's
		default:
			p.goAlone(p.err.Error())
		}
	case opTakeOver:
		if p.err != nil && !errors.Is(p.err, registry.ErrLockTimeout) {
			p.goAlone(p.err.Error())
			return
		}
		p.start(op{name: opObserve})
	case opPublish:
		switch {
		case p.err == nil:
			p.phase, p.seen = serving, w.content(leasePath)
			p.start(op{name: opAppend})
		case errors.Is(p.err, registry.ErrLeaseNotOurs):
			p.phase = lost
		default: // the server could not start: it releases the lease
			p.start(op{name: opRelease, then: alone})
		}
	case opWriteState:
		p.start(op{name: opPublish})
	case opCheck:
		snap := p.obs.Snapshot
		switch {
		case snap.Found == registry.Unreadable: // not lost: unreadable now
		case !snap.Holds(p.instance):
			p.phase = lost
		default:
			p.seen = w.content(leasePath) // what it just read
		}
	case opRelease:
		p.instance, p.url = "", ""
		if o.then == alone {
			p.goAlone("the server could not start")
		} else {
			p.phase = o.then
		}
	}
}

// judged reacts to an observation as the machine does in Electing.
func (p *proc) judged(obs registry.Observation) {
	w, now := p.w, p.w.time()
	class := machine.Class(obs.Verdict.Class)
	p.busySince = machine.NextBusySince(p.busySince, class, now)
	w.say("%s: judged %s", p.name, obs.Verdict.Reason)
	if obs.Verdict.Class == registry.Absent {
		p.start(op{name: opAcquire}) // Attempt creates the lease it finds absent
		return
	}
	trigger, _ := machine.TriggerFor(machine.Observation{Class: class, Reason: obs.Verdict.Reason})
	switch trigger {
	case machine.LeaseLive:
		p.phase, p.rejoining, p.bridgedTo = attached, false, obs.Lease.Instance
	case machine.LeaseBusy:
		if machine.GraceElapsed(p.busySince, now, busyGrace) {
			p.start(op{name: opTakeOver, obs: obs, judged: string(obs.Raw)})
		} else {
			p.wait(p.busySince.Add(busyGrace).Sub(epoch))
		}
	case machine.LeaseBinding:
		p.wait(w.now + obs.Verdict.Grace)
	case machine.LeaseUnusable:
		p.goAlone(obs.Verdict.Reason)
	default: // stale, corrupt, empty, abandoned, superseded
		p.start(op{name: opTakeOver, obs: obs, judged: string(obs.Raw)})
	}
}

// wait waits, as the machine does, for the lease just read to change, or
// for until.
func (p *proc) wait(until time.Duration) {
	p.waitOn, p.waitUntil = p.w.content(leasePath), until
}

func (p *proc) goAlone(reason string) {
	p.w.say("%s: serves its client alone: %s", p.name, reason)
	p.phase, p.rejoining, p.retryAt = alone, false, p.w.now+joinRetry
}

// elect begins an election (the first, or after a loss, a failed bridge,
// or a retry from alone).
func (p *proc) elect(rejoining bool) {
	p.phase, p.rejoining, p.since, p.busySince, p.waitOn = electing, rejoining, p.w.now, time.Time{}, ""
	p.start(op{name: opObserve})
}

// idle is the step of a process with no operation in flight, and whether
// it has one now. A process waits for what its machine waits for: a change
// of the lease, a grace, a retry, a server that stops answering.
func (p *proc) idle(do bool) bool {
	w := p.w
	switch p.phase {
	case electing:
		switch {
		case w.now >= p.since+bound:
			if do {
				w.say("%s: the election ran out of time", p.name)
				p.goAlone("no usable lease within the election bound")
			}
		case p.waitOn != "" && w.content(leasePath) == p.waitOn && w.now < p.waitUntil:
			return false
		case do:
			p.waitOn = ""
			p.start(op{name: opObserve})
		}
		return true
	case serving:
		if w.content(leasePath) == p.seen {
			return false // its watch sees no change
		}
		if do {
			p.start(op{name: opCheck})
		}
		return true
	case lost:
		if do {
			p.lf.Forget()
			p.instance, p.url, p.appendTo = "", "", 0
			p.elect(false)
		}
		return true
	case attached:
		if w.answers(p.bridgedTo) {
			return false
		}
		if do {
			w.say("%s: its bridge fails", p.name)
			p.elect(false)
		}
		return true
	case alone:
		if w.now < p.retryAt {
			return false
		}
		if do {
			p.elect(true)
		}
		return true
	}
	return false
}

// served says whether the process's client is served now.
func (p *proc) served() bool {
	switch p.phase {
	case serving, attached, alone:
		return true
	case electing:
		return p.rejoining
	}
	return false
}

func (p *proc) alive() bool { return p.phase != killed && p.phase != exited }

// believesLeaseholder: its server answers as the leaseholder.
func (p *proc) believesLeaseholder() bool {
	return p.alive() && (p.phase == holding || p.phase == serving)
}

// willNotice says whether a process whose lease is no longer in the file
// finds out at its next step: an operation that reads the lease under
// the lock first, or its watch, which fires on the change. The product's
// watch runs beside the journal's appends (a record is one write, which
// takes on no session), so a leaseholder with an append in flight is
// told as soon as that write is made: the model only runs the two one
// after the other.
func (p *proc) willNotice() bool {
	if p.op != nil {
		switch p.op.name {
		case opPublish, opWriteState, opRelease, opCheck, opAppend:
			return true
		}
		return false
	}
	return p.phase == serving && p.idle(false)
}

func (p *proc) String() string {
	s := fmt.Sprintf("%s %s", p.name, p.phase)
	if p.instance != "" {
		s += " (lease " + p.instance + ")"
	}
	return s
}
