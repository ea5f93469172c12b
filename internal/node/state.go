package node

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// The checkout's shared state (docs/design.md#nothing-is-lost): the
// leaseholder's server keeps its execution history and its board's
// announcers in the lease directory, so that whoever serves next shows
// them. A process that becomes the leaseholder reads what the server before
// left, before its own server admits a session, and writes it back as a
// fresh journal merged with its own; from then on every change is appended,
// one record a write, before the call that made it is answered. It stops at
// once when the lease is lost: what its server does after that is not the
// checkout's. State that cannot be read is set aside with a warning and
// never keeps anyone from sharing.

// Journal bounds: the journal is written afresh from what it holds once
// this many records, or bytes, were appended to it.
const (
	compactAfterRecords = 2 * 1000
	compactAfterBytes   = 4 << 20
)

// judgeState decides what a read of the state gives: the state to start
// from, and why what was read is set aside ("" when it is not: nothing
// there, or a state; a final record of that state cut short is dropped,
// which torn says: of what is set aside, nothing is).
func judgeState(f registry.StateFile) (st surface.State, aside string, torn bool) {
	switch {
	case f.Found == registry.Missing:
		return surface.State{}, "", false
	case f.Found == registry.Symlink:
		return surface.State{}, "it is a symbolic link, which is never followed", false
	case f.Found == registry.Directory:
		return surface.State{}, "it is a directory", false
	case f.Found == registry.Special:
		return surface.State{}, "it is a special file (a pipe, a socket or a device), which is never opened", false
	case f.Found == registry.Unreadable:
		return surface.State{}, fmt.Sprintf("it cannot be read: %v", f.Err), false
	case f.Foreign != "":
		return surface.State{}, f.Foreign, false
	case f.Oversized:
		return surface.State{}, fmt.Sprintf("it is larger than %d bytes, which no state of this server's grows to", registry.MaxStateSize), false
	}
	st, torn, err := surface.DecodeState(f.Raw)
	if err != nil {
		return surface.State{}, err.Error(), false
	}
	return st, "", torn
}

// keeper writes the checkout's shared state for one term of this
// process's server as the leaseholder.
type keeper struct {
	log  *zap.Logger
	path string
	surf *surface.Surface

	mu       sync.Mutex
	journal  *registry.Journal    // nil before the journal is written, or when the state must be left where it is
	mirror   *surface.StateMirror // what the journal holds, or is to hold once written again (behind)
	early    [][]byte             // records made before the journal was written
	started  bool
	stopped  bool
	appended int // records appended since the journal was last written afresh
	bytes    int
	written  int // the bytes the journal was last written afresh with
	// behind: a write failed (a full disk, say), so the file lacks what the
	// mirror holds; the whole state is written afresh at a later record
	// (writeAfresh).
	behind   bool
	failedAt time.Time   // when the last write afresh failed; zero once one succeeded
	retry    *time.Timer // tries again while behind, should no record come
	now      func() time.Time
	// again: when the state was last written again after a failure, until
	// an append succeeds; an append failing meanwhile is the same failure
	// (the state fits where a record more does not), not said again, and
	// tried again writeAgainEvery later, not at once
	again time.Time
	// owed: the calls the surface merged as the term began (its own
	// client's, up to mark) wait to be forgotten there until a write has
	// them, its first having failed.
	owed bool
	mark int
	// holds reports whether the lease is still the term's: a record made
	// once it is not (a server continued after a freeze) is appended
	// where no history the checkout reads has it. Nil: always.
	holds func() bool
}

// writeAgainEvery is how often a keeper whose writes fail tries again: a
// state is written whole, under the lease's lock, which a record waits for.
const writeAgainEvery = time.Second

// keepState loads the state beside the lease at leasePath into srv and
// starts keeping it, as the leaseholder of instance while holds says so.
// Whatever fails, srv serves on: the history is then this server's alone,
// which the log says.
func keepState(log *zap.Logger, srv *served, leasePath, instance string, now time.Time, holds func() bool) *keeper {
	surf := srv.surface
	k := &keeper{log: log, path: registry.StatePath(leasePath), surf: surf, now: time.Now, holds: holds}
	f := registry.ReadState(leasePath)
	st, aside, torn := judgeState(f)
	writable := true
	if aside != "" {
		moved, err := registry.SetStateAside(leasePath, instance, now)
		if err != nil {
			writable = false
			log.Warn(fmt.Sprintf("the checkout's shared state at %s cannot be read (%s) and is left where it is (%v): this server starts a new history and keeps it in memory only; sharing goes on",
				k.path, aside, err), zap.String("state_file", k.path), zap.String("reason", aside))
		} else {
			log.Warn(fmt.Sprintf("the checkout's shared state at %s cannot be read (%s); it is set aside as %s and a new one is started; sharing goes on",
				k.path, aside, moved), zap.String("state_file", k.path), zap.String("reason", aside), zap.String("set_aside", moved))
		}
	}
	if torn {
		log.Info("the last record of the checkout's shared state was cut short (its writer was killed while writing it) and is dropped", zap.String("state_file", k.path))
	}
	srv.layer.Continue(st.Layer.Number, st.Layer.Digest)
	merged := surf.Keep(st, k.record)
	if k.begin(merged, leasePath, instance, writable, surf.Executions.Merged()) {
		// after begin, not under k.mu: the surface calls the sink, which
		// takes k.mu, with its own lock held
		surf.Executions.Written()
	}
	return k
}

// begin writes the merged state, with the records given meanwhile, and
// journals from then on; it reports whether the state was written.
func (k *keeper) begin(merged surface.State, leasePath, instance string, writable bool, mark int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.mirror = surface.NewStateMirror(merged)
	for _, line := range k.early {
		k.mirror.Apply(line)
	}
	k.early, k.started = nil, true
	if !writable {
		return false
	}
	k.journal = &registry.Journal{Lease: leasePath, Instance: instance}
	content := k.mirror.Encode()
	if err := k.journal.Replace(content); err != nil {
		k.fellBehind(err)
		k.owed, k.mark = true, mark
		k.failedAt = k.now()
		k.tryAgainLater()
		return false
	}
	k.written = len(content)
	k.log.Info("the checkout's shared state is loaded and kept here",
		zap.String("state_file", k.path), zap.Int("executions", len(merged.Executions)), zap.Int("announcers", len(merged.Peers)), zap.Uint64("generation", merged.Layer.Number))
	return true
}

// record appends one record (the surface's sink: it runs before the
// change it records is answered), and reports whether the checkout's
// history keeps it: not once the term ended or its lease was lost.
func (k *keeper) record(line []byte) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.stopped:
		return false
	case !k.started:
		k.early = append(k.early, line)
		return true
	}
	k.mirror.Apply(line)
	if k.journal == nil { // kept in memory only
		return k.holds == nil || k.holds()
	}
	if !k.behind {
		if k.written+k.bytes+len(line) > registry.MaxStateSize {
			// not written afresh since (the lock held, say): a longer file
			// would be no state to its reader, who would set it all aside
			k.fellBehind(fmt.Errorf("appending would grow it past %d bytes, as it could not be written afresh", registry.MaxStateSize))
		} else if err := k.journal.Append(line); err != nil {
			k.fellBehind(err)
		} else {
			k.again = time.Time{}
		}
		k.appended++
		k.bytes += len(line)
	}
	if k.behind || k.appended >= compactAfterRecords || k.bytes >= compactAfterBytes {
		k.writeAfresh()
	}
	return k.holds == nil || k.holds()
}

// writeAfresh writes the whole state from the mirror: once the journal
// grew by its bound, and while it is behind. After a write that failed, it
// waits writeAgainEvery before it tries again; a journal that only could
// not be compacted goes on appending meanwhile.
func (k *keeper) writeAfresh() {
	if k.now().Sub(k.failedAt) < writeAgainEvery {
		k.tryAgainLater()
		return
	}
	content := k.mirror.Encode()
	if err := k.journal.Replace(content); err != nil {
		switch {
		case errors.Is(err, registry.ErrLeaseNotOurs):
		case !k.again.IsZero():
			// written again, and now not even whole: a failure anew, no
			// longer that of a state that fits where a record more does not
			k.log.Warn("writing the checkout's shared state failed; this server keeps what it records in memory and writes the whole state again once it can",
				zap.String("state_file", k.path), zap.Error(err))
		case k.failedAt.IsZero() && !k.behind:
			k.log.Warn("writing the checkout's shared state afresh failed; appending to it goes on", zap.String("state_file", k.path), zap.Error(err))
		}
		k.again = time.Time{}
		k.failedAt = k.now()
		k.tryAgainLater()
		return
	}
	if k.behind {
		if k.again.IsZero() {
			k.log.Info("the checkout's shared state is written again, with everything recorded meanwhile", zap.String("state_file", k.path))
		}
		k.again = k.now()
	}
	if k.owed {
		// not here: a record is given with the history's lock held
		k.owed = false
		go k.surf.Executions.Shared(k.mark)
	}
	k.behind, k.failedAt, k.appended, k.bytes, k.written = false, time.Time{}, 0, 0, len(content)
}

// tryAgainLater writes the state afresh writeAgainEvery after its last
// failure while it is behind, should no record come to, unless it was
// written or the term ended by then (k.mu held).
func (k *keeper) tryAgainLater() {
	if !k.behind {
		return
	}
	in := writeAgainEvery - k.now().Sub(k.failedAt) // a second after the failure
	if k.retry != nil {
		k.retry.Reset(in)
		return
	}
	k.retry = time.AfterFunc(in, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if !k.stopped && k.behind {
			k.writeAfresh()
		}
	})
}

// fellBehind notes that the state's file lacks what the mirror holds. A
// lease no longer this server's (released as its client left at once, or
// taken over) is no failure to warn of: the state is its holder's now.
func (k *keeper) fellBehind(err error) {
	switch {
	case k.behind:
	case errors.Is(err, registry.ErrLeaseNotOurs):
		k.log.Debug("the checkout's shared state is not written: the lease is no longer this server's", zap.String("state_file", k.path), zap.Error(err))
	case !k.again.IsZero():
		k.failedAt = k.now() // written whole again only writeAgainEvery from now
		k.log.Debug("the checkout's shared state, just written again, cannot be appended to; it is written again a second later", zap.String("state_file", k.path), zap.Error(err))
	default:
		k.log.Warn("writing the checkout's shared state failed; this server keeps what it records in memory and writes the whole state again once it can",
			zap.String("state_file", k.path), zap.Error(err))
	}
	k.behind = true
}

// stop ends the term: nothing is written from now on.
func (k *keeper) stop() {
	if k == nil {
		return
	}
	k.surf.Unkeep()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.behind && k.journal != nil {
		k.failedAt = time.Time{} // a last try, whenever the one before was
		k.writeAfresh()
	}
	if k.retry != nil {
		k.retry.Stop()
	}
	if k.journal != nil {
		k.journal.Close()
		k.journal = nil
	}
}

// keep starts keeping the checkout's shared state for srv's term t, while
// the lease is t's and t is not lost.
func (s *sharedServer) keep(srv *served, t *term) *keeper {
	n := s.node
	return keepState(n.log, srv, n.lease.Path(), t.instance, time.Now(), func() bool {
		ours, _ := n.lease.Carries(t.instance) // only read: the record runs under the surface's locks
		return ours && t.lost.Load() == nil
	})
}
