//go:build unix

package scenarios

// Board histories are linearizable (docs/design.md#nothing-is-lost): every
// announce, peers, executions and leave that bridged clients make through
// three take-overs — kill -9, SIGTERM and a frozen owner — is recorded
// with its call and return, and porcupine checks the history against the
// board's sequential model (boardmodel_test.go). SIGSTOP is why it is Unix's.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Clients read the board and the history without pause, each in its own
// goroutine, while the leaseholder is killed -9, then the next one is sent
// SIGTERM, then the next one is frozen (SIGSTOP) until the others take
// over, and continued; they announce all along, announcements in flight
// when a leaseholder goes included, and clients join and leave. The
// history is linearizable, every client keeps its peer id, and the same
// history with one answered announcement lost is not.
func TestBoardHistoriesThroughThreeTakeOversAreLinearizable(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	r := &recorder{start: time.Now(), changed: make(chan struct{})}
	// A frozen owner is given up after a busy grace; under load, a live
	// one answers its probe within the probe timeout.
	flags := []string{"--busy-grace", "2s", "--probe-timeout", "1s", "--election-bound", "10s"}
	a := r.join(t, dir, "agent-a", flags, true)
	live := []*agent{a, r.join(t, dir, "agent-b", flags, false), r.join(t, dir, "agent-c", flags, false), r.join(t, dir, "agent-d", flags, false)}
	holder := a
	others := func(g *agent) *agent { return live[slices.IndexFunc(live, func(h *agent) bool { return h != g })] }

	// 1: the leaseholder is killed -9 with reads and announcements in
	// flight; one of the others takes over, a client joins and another
	// leaves.
	r.run(t, 4, true, live...)
	before := failovers(live)
	live = r.end(t, live, holder, syscall.SIGKILL)
	holder = takenOver(t, live, before)
	live = append(live, r.join(t, dir, "agent-e", flags, false))
	r.run(t, 2, true, live...)
	live = r.leave(t, live, others(holder))

	// 2: the leaseholder is sent SIGTERM with the others' calls in flight.
	r.run(t, 4, true, live...)
	before = failovers(live)
	live = r.end(t, live, holder, syscall.SIGTERM)
	holder = takenOver(t, live, before)
	live = append(live, r.join(t, dir, "agent-f", flags, false))
	r.run(t, 2, true, live...)
	r.idle(t, live...)

	// 3: the leaseholder is frozen, no call of its own client in flight,
	// until the others' calls have moved them to one that took over;
	// continued, it has lost its lease, and its client leaves.
	frozen := holder
	frozen.halt()
	live = slices.DeleteFunc(live, func(g *agent) bool { return g == frozen })
	before = failovers(live)
	stop(t, frozen.p)
	t.Cleanup(func() { frozen.p.Signal(syscall.SIGCONT) })
	r.run(t, 3, true, live...)
	holder = takenOver(t, live, before)
	r.idle(t, live...)
	r.run(t, 1, true, live...)
	if err := frozen.p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	r.leave(t, []*agent{frozen}, frozen)
	r.run(t, 1, true, live...)

	// Everyone leaves, the leaseholder's client last (its process serves
	// until then), having read the board once the others had left.
	for len(live) > 1 {
		live = r.leave(t, live, others(holder))
	}
	r.run(t, 1, false, live...)
	r.leave(t, live, live[0])

	ops := r.history()
	result, why, err := checkBoardHistory(ops)
	if err != nil || result != porcupine.Ok {
		t.Fatalf("the board's history of %d operations is %v (%v); the operations no order explains:\n%s", len(ops), result, err, why)
	}
	lost, ok := loseAnnouncement(ops)
	if !ok {
		t.Fatal("the history holds no answered announcement that a later read shows")
	}
	if result, _, err := checkBoardHistory(lost); result != porcupine.Illegal || err != nil {
		t.Fatalf("the history with an announcement lost is %v (%v), want illegal", result, err)
	}
	t.Logf("%d operations, 3 take-overs: linearizable; with one announcement lost: not", len(ops))
}

// recorder takes down every board operation the scenario's clients make.
type recorder struct {
	start   time.Time
	mu      sync.Mutex
	ops     []boardOp
	changed chan struct{} // closed and replaced on every operation recorded
}

// now is the recording's clock.
func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

// add records ops, and wakes every wait on the recording.
func (r *recorder) add(ops ...boardOp) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, ops...)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) history() []boardOp {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ops)
}

// done counts the operations client finished.
func (r *recorder) done(client string) (int, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, op := range r.ops {
		if op.Client == client {
			n++
		}
	}
	return n, r.changed
}

// agent is one client process and the goroutine that drives it, one
// round of operations for each round it is given: a read of the board, an
// announcement when the round says so, and a read of the history.
type agent struct {
	name   string
	p      *mcpclient.Process
	rounds chan bool     // true: announce in this round
	owed   atomic.Int32  // rounds given and not yet made
	quit   chan struct{} // closed to stop it
	ended  chan struct{} // closed when its goroutine has ended
}

// join starts a client, the checkout's first or a bridged one, and its
// goroutine.
func (r *recorder) join(t *testing.T, dir, name string, flags []string, first bool) *agent {
	t.Helper()
	g := &agent{name: name, rounds: make(chan bool, 100), quit: make(chan struct{}), ended: make(chan struct{})}
	if first {
		g.p = shared(t, dir, flags...)
		initialize(t, g.p, name)
		serverURL(t, g.p)
	} else {
		g.p = bridged(t, dir, name, flags...)
	}
	go r.drive(g)
	return g
}

// drive makes g's rounds until it is halted or its process is gone.
func (r *recorder) drive(g *agent) {
	defer close(g.ended)
	for step := 1; ; step++ {
		var announce bool
		select {
		case announce = <-g.rounds:
		case <-g.quit:
			return
		}
		for _, kind := range []string{opPeers, opAnnounce, opExecutions} {
			if (kind != opAnnounce || announce) && !r.do(g, kind, fmt.Sprintf("%s, step %d", g.name, step)) {
				return
			}
		}
		g.owed.Add(-1)
		r.add() // wakes a wait for g to be idle
	}
}

// do makes one operation and records it; false when g's process is gone.
func (r *recorder) do(g *agent, kind, intent string) bool {
	c, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	op := boardOp{Client: g.name, Kind: kind, Call: r.now()}
	var isErr bool
	var err error
	switch kind {
	case opPeers:
		var b boardView
		isErr, _, err = g.p.CallTool(c, toolOf[kind], nil, &b)
		op.Caller = b.Caller
		for _, p := range b.Peers {
			shown := shownPeer{Client: p.Client.Name, Attached: p.Attached}
			if p.Announcement != nil {
				shown.Intent = p.Announcement.Intent
			}
			op.Board = append(op.Board, shown)
		}
	case opAnnounce:
		op.Intent = intent
		isErr, _, err = g.p.CallTool(c, toolOf[kind], map[string]any{"intent": intent, "scope": []string{"src/" + g.name}}, nil)
	case opExecutions:
		var out struct{ Executions []execution }
		isErr, _, err = g.p.CallTool(c, toolOf[kind], map[string]any{"limit": 1000}, &out)
		op.History = slices.Clone(out.Executions)
		slices.Reverse(op.History) // it answers newest first
	}
	op.Return = r.now()
	switch {
	case err != nil:
		op.Outcome = unknown
	case isErr:
		op.Outcome = refused
	}
	r.add(op)
	return err == nil || !exited(g.p)
}

// exited reports whether p's process has ended.
func exited(p *mcpclient.Process) bool {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Wait(c)
	return err == nil
}

// halt stops g's goroutine after its operation in flight.
func (g *agent) halt() {
	select {
	case <-g.quit:
	default:
		close(g.quit)
	}
	<-g.ended
}

// run gives each of gs rounds more rounds (announce says whether they
// announce), and waits until each has made the first; the others go on.
func (r *recorder) run(t *testing.T, rounds int, announce bool, gs ...*agent) {
	t.Helper()
	ops := 2
	if announce {
		ops = 3
	}
	from := map[*agent]int{}
	for _, g := range gs {
		from[g], _ = r.done(g.name)
		g.owed.Add(int32(rounds))
		for range rounds {
			g.rounds <- announce
		}
	}
	r.await(t, "a round", gs, func(g *agent) bool { n, _ := r.done(g.name); return n >= from[g]+ops })
}

// idle waits until each of gs has made every round it was given.
func (r *recorder) idle(t *testing.T, gs ...*agent) {
	t.Helper()
	r.await(t, "every round", gs, func(g *agent) bool { return g.owed.Load() == 0 })
}

// await waits until done holds for each of gs, on the recording's events.
func (r *recorder) await(t *testing.T, what string, gs []*agent, done func(*agent) bool) {
	t.Helper()
	deadline := time.After(wait)
	for _, g := range gs {
		for {
			_, changed := r.done(g.name)
			if done(g) {
				break
			}
			select {
			case <-changed:
			case <-g.ended:
				t.Fatalf("%s stopped making calls: its process is gone", g.name)
			case <-deadline:
				t.Fatalf("%s did not make %s within %s", g.name, what, wait)
			}
		}
	}
}

// leave ends g's client as a host does, closing its stdin, and records it:
// it has left when its process has exited.
func (r *recorder) leave(t *testing.T, live []*agent, g *agent) []*agent {
	t.Helper()
	g.halt()
	op := boardOp{Client: g.name, Kind: opLeave, Call: r.now()}
	g.p.CloseStdin()
	exitsWith(t, g.p, 0)
	op.Return = r.now()
	r.add(op)
	return slices.DeleteFunc(live, func(h *agent) bool { return h == g })
}

// end ends g's process with sig and records its client's leave. Its own
// client has a call in flight when sig is SIGKILL; a host that sends a
// signal a process can catch sends it no call after: what a server that
// is shutting down answers its own client, no longer its peer, is nobody's.
func (r *recorder) end(t *testing.T, live []*agent, g *agent, sig syscall.Signal) []*agent {
	t.Helper()
	if sig != syscall.SIGKILL {
		g.halt()
	}
	op := boardOp{Client: g.name, Kind: opLeave, Call: r.now()}
	if err := g.p.Signal(sig); err != nil {
		t.Fatal(err)
	}
	if _, err := g.p.Wait(ctx(t)); err != nil {
		t.Fatal(err)
	}
	op.Return = r.now()
	g.halt()
	r.add(op)
	return slices.DeleteFunc(live, func(h *agent) bool { return h == g })
}

// The lines a bridge logs when its server is gone and it moved on.
const (
	tookOver     = "took over as the shared server"
	reattachedTo = "re-attached to the shared server"
)

// failovers counts, per client, the take-overs its process logged so far.
func failovers(gs []*agent) map[*agent]int {
	n := map[*agent]int{}
	for _, g := range gs {
		n[g] = g.p.CountLogs(tookOver)
	}
	return n
}

// takenOver waits until one of gs has taken over once more than before
// and the others have re-attached to its server, and returns it.
func takenOver(t *testing.T, gs []*agent, before map[*agent]int) *agent {
	t.Helper()
	c, cancel := context.WithCancel(ctx(t))
	defer cancel()
	won := make(chan *agent, len(gs))
	for _, g := range gs {
		go func() {
			if g.p.WaitLogs(c, before[g]+1, tookOver) == nil {
				won <- g
			}
		}()
	}
	var holder *agent
	select {
	case holder = <-won:
	case <-c.Done():
		t.Fatal("no client took over")
	}
	cancel()
	var url string
	for _, l := range holder.p.Logs() {
		if mcpclient.ContainsAll(l, []string{tookOver}) {
			url = fieldOf(t, l, "url")
		}
	}
	for _, g := range gs {
		if g == holder {
			continue
		}
		if _, err := g.p.WaitLog(ctx(t), reattachedTo, url); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
	}
	return holder
}
