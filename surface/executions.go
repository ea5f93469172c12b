package surface

import (
	"encoding/json"
	"slices"
	"sync"
	"time"
)

// executionsKept bounds the history, here and in the shared state.
const executionsKept = 1000

// Execution is one tool call answered by this server.
type Execution struct {
	Tool       string    `json:"tool"`
	Peer       string    `json:"peer"`
	At         time.Time `json:"at"`
	DurationMS float64   `json:"duration_ms"`
	OK         bool      `json:"ok"`
	// Call is the key its client's process gave the call, the same each
	// time it was sent (Config.Call): bookkeeping, which no view shows.
	Call string `json:"call,omitempty"`
}

// Executions is the recent tool-call history, newest last, in the order
// the calls were recorded: it only grows at its end, so that every read
// extends the one before (what a reader polling it for what is new relies
// on, and what the board's linearizability check holds it to), though a
// call that began earlier may end, and be recorded, later. It is safe for
// concurrent use.
//
// While it is the checkout's (kept), each call is also given to its sink
// as it is recorded. While it is not, the process's own client's calls —
// served alone, answered while it is elected for, or on a server that has
// just lost its lease — wait to be merged into the checkout's history once
// it is, here or on the server the client is carried to, and are
// forgotten once that history has them (Shared). Another session's call
// made then is a lease-lost server's, and never is: it is not the
// checkout's. (A process that wins the lease again keeps this history
// again, and a server of its that still drains shares its board, so the
// draining sessions' calls from then on are the checkout's.)
type Executions struct {
	mu       sync.Mutex
	ring     []Execution
	pending  []Execution            // the own client's, recorded while not kept
	made     int                    // how many were ever made pending: the last pending is the made-th
	merged   int                    // made when keep merged them in
	relabels int                    // how many relabels were made (recordNamed)
	away     func()                 // told of each own call made pending, once recorded (Away)
	sink     func(x Execution) bool // nil while not kept; false: the checkout's history does not keep x
	changes  *changes               // moved by every call recorded (changes.go)
}

// Record adds one call of a session other than the own client's,
// dropping the oldest past the bound.
func (e *Executions) Record(x Execution) { e.record(x, false) }

// RecordOwn adds one call of the process's own client.
func (e *Executions) RecordOwn(x Execution) { e.record(x, true) }

func (e *Executions) record(x Execution, own bool) {
	e.mu.Lock()
	e.unlockTelling(e.recordLocked(x, own))
}

// recordNew adds x unless the history holds it (Execution.same), in one
// step: a history brought twice at once joins once.
func (e *Executions) recordNew(x Execution, own bool) {
	e.mu.Lock()
	if slices.ContainsFunc(e.ring, x.same) {
		e.mu.Unlock()
		return
	}
	e.unlockTelling(e.recordLocked(x, own))
}

// Away has f told of each call of the own client recorded while no shared
// history keeps this one, once it is recorded and before its answer goes:
// what gives it to where the client is served now (nil: nothing does).
func (e *Executions) Away(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.away = f
}

// recordNamed adds x under the id named gives its peer, asked outside mu
// (it asks the board), and asked again should a relabel have come between
// the asking and the recording: a call whose peer Keep numbers anew as it
// is recorded is never left under the id given up.
func (e *Executions) recordNamed(x Execution, own bool, named func() string) {
	for {
		e.mu.Lock()
		asked := e.relabels
		e.mu.Unlock()
		x.Peer = named()
		e.mu.Lock()
		if e.relabels == asked {
			e.unlockTelling(e.recordLocked(x, own))
			return
		}
		e.mu.Unlock()
	}
}

// unlockTelling releases mu, then tells away, when it is given, of the call
// just made pending (Away): what it runs is never under mu.
func (e *Executions) unlockTelling(away func()) {
	e.mu.Unlock()
	if away != nil {
		away()
	}
}

// recordLocked adds x (mu held), and returns what is to be told once mu
// is released (Away), or nil.
func (e *Executions) recordLocked(x Execution, own bool) (away func()) {
	if x.Call != "" && e.kept(x.Call, x.Peer) {
		return nil // sent again: the server that left it unanswered kept it
	}
	defer e.changes.bump()
	e.ring = appendBounded(e.ring, x)
	if kept := e.sink != nil && e.sink(x); kept || !own {
		return nil
	}
	// the own client's, kept nowhere the checkout reads (nothing keeps
	// them, or the lease was lost as the call ran): it waits to join
	e.pending, e.made = appendBounded(e.pending, x), e.made+1
	return e.away
}

// appendBounded appends x, keeping the last executionsKept (the slice is
// cut now and then, not at every call).
func appendBounded(xs []Execution, x Execution) []Execution {
	xs = append(xs, x)
	if len(xs) >= 2*executionsKept {
		xs = slices.Clone(xs[len(xs)-executionsKept:])
	}
	return xs
}

// same reports whether y is x, kept by another server: a call is the same
// by its tool, when it began (to the nanosecond) and how long it took,
// whoever it is recorded for, or by its tool and key, when it has one: a
// call its server left unanswered, sent again, began anew.
func (x Execution) same(y Execution) bool {
	return x.Tool == y.Tool && (x.At.Equal(y.At) && x.DurationMS == y.DurationMS || x.Call != "" && x.Call == y.Call)
}

// kept reports whether the history holds a call of key by peer (mu held):
// only its own client's call may keep a call of a client's away, whatever
// key another client names. The newest first: one sent again is recent.
func (e *Executions) kept(key, peer string) bool {
	for i := len(e.ring) - 1; i >= 0; i-- {
		if e.ring[i].Call == key && e.ring[i].Peer == peer {
			return true
		}
	}
	return false
}

// Unshared returns the calls recorded while no shared history kept them,
// oldest first, as majordomus_executions shows them (nil when none), and
// the mark that Shared forgets them by.
func (e *Executions) Unshared() (json.RawMessage, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.pending) == 0 {
		return nil, e.made
	}
	raw, _ := json.Marshal(e.pending)
	return raw, e.made
}

// Shared forgets the calls Unshared returned with mark: a shared history
// has them. One recorded since stays, whatever the bound cut meanwhile.
func (e *Executions) Shared(mark int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forget(mark)
}

// Written forgets the calls keep merged: the checkout's state has them.
func (e *Executions) Written() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forget(e.merged)
}

// Merged is the mark of the calls keep merged, which Shared forgets them
// by: what forgets them once a later write of the checkout's state has
// them, the first having failed.
func (e *Executions) Merged() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.merged
}

// forget drops the pending calls made up to mark (mu held).
func (e *Executions) forget(mark int) {
	since := e.made - mark
	e.pending = slices.Clone(e.pending[max(0, len(e.pending)-since):])
}

// Recent returns up to limit calls, the most recently recorded first.
func (e *Executions) Recent(limit int) []Execution {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Execution, 0, min(limit, len(e.ring), executionsKept))
	for i := len(e.ring) - 1; i >= 0 && len(out) < limit && len(out) < executionsKept; i-- {
		x := e.ring[i]
		x.Call = ""
		out = append(out, x)
	}
	return out
}

// keep makes the history the checkout's: loaded (in the order its
// journal recorded it), with the calls pending after it, within the
// bound; sink is given every call from now on. It returns the history as
// merged. The calls stay pending until the checkout's state has them
// (Written): a term lost before it wrote them carries them on. A pending
// call loaded already (a server that died as it took them kept some, under
// the id it gave their client) is the own client's, under its id now.
func (e *Executions) keep(loaded []Execution, sink func(Execution) bool) []Execution {
	e.mu.Lock()
	defer e.mu.Unlock()
	merged := slices.Clone(loaded)
	for _, x := range e.pending {
		if i := slices.IndexFunc(loaded, x.same); i >= 0 {
			merged[i].Peer = x.Peer
			continue
		}
		merged = append(merged, x)
	}
	merged = merged[max(0, len(merged)-executionsKept):]
	e.ring, e.sink, e.merged = slices.Clone(merged), sink, e.made
	e.changes.bump()
	return merged
}

// relabel makes the calls of peer id old those of id (Board.renumber).
func (e *Executions) relabel(old, id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.relabels++
	for _, list := range [][]Execution{e.ring, e.pending} {
		for i := range list {
			if list[i].Peer == old {
				list[i].Peer = id
			}
		}
	}
}

// unkeep stops giving calls to the sink.
func (e *Executions) unkeep() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sink = nil
}
