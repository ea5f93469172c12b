package node

import (
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// runtimeTuning sets the Go runtime for what the process is. A bridge
// holds little but relays a lot, so once its client's first answer is
// written (tuned sooner, it held that answer back by up to 3 ms in one
// start of ten: B1), or as it attaches when that answer is out already
// (greeted, answered in process while it elected, or as it failed over;
// the replay and relay that follow may then wait a millisecond or two,
// once, but their pages fault in after the drop, not on top of it: B6):
//   - it sheds the pages of the binary that its start and election
//     touched, which a relay does not run, and only then collects: the
//     first collection adds about 0.7 MiB of the collector's own
//     bookkeeping, which on top of those pages set a bridge's peak (B6);
//   - it collects sooner (bridgeGCPercent) and gives back what its start
//     left (B6);
//   - it runs on one processor. Its work is a hand-off per message (a
//     goroutine woken, a timer set), and with a processor idle each one
//     starts a thread that finds nothing to do: on one, a bridged call
//     cost about 110 µs of CPU instead of 155 (B2).
//
// A process that serves (leaseholder, alone) gets back the processors it
// started with and the default collector.
type runtimeTuning struct {
	mu       sync.Mutex
	procs    int    // GOMAXPROCS at start
	attached bool   // the process's last state was attached
	shed     func() // drops the binary's pages from the resident set; nil: nothing to drop
}

// bridgeGCPercent is the GOGC of a process while it only bridges.
const bridgeGCPercent = 25

// became records the process's new state, and tunes the runtime for one
// that serves.
func (t *runtimeTuning) became(s machine.State) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.attached = s == machine.Attached
	if s == machine.Leaseholder || s == machine.Alone {
		debug.SetGCPercent(100)
		runtime.GOMAXPROCS(t.procs)
	}
}

// bridging tunes the runtime for a bridge, if the process is still
// attached.
func (t *runtimeTuning) bridging() {
	t.mu.Lock()
	attached := t.attached
	t.mu.Unlock()
	if attached && t.shed != nil {
		t.shed() // not under mu: a transition meanwhile does not wait for it
	}
	t.mu.Lock()
	attached = t.attached
	if attached {
		debug.SetGCPercent(bridgeGCPercent)
		runtime.GOMAXPROCS(1)
	}
	t.mu.Unlock()
	if attached {
		debug.FreeOSMemory()
	}
}
