package node

import (
	"io"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// stalling is a client's stdout that its host may stop reading, as a
// stopped or debugged host does: once stalled, a write waits until the
// test ends, and blocked is closed as the first one begins to.
type stalling struct {
	w       io.Writer
	mu      sync.Mutex
	stalled bool
	blocked chan struct{}
	once    sync.Once
	resume  chan struct{}
}

func newStalling(t *testing.T, w io.Writer) *stalling {
	s := &stalling{w: w, blocked: make(chan struct{}), resume: make(chan struct{})}
	t.Cleanup(func() { close(s.resume) }) // once the node was waited for (cleanups run last first): what it left writing ends
	return s
}

func (s *stalling) stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stalled = true
}

func (s *stalling) Write(p []byte) (int, error) {
	s.mu.Lock()
	stalled := s.stalled
	s.mu.Unlock()
	if stalled {
		s.once.Do(func() { close(s.blocked) })
		<-s.resume
	}
	return s.w.Write(p)
}

// An attached process whose host has stopped reading its stdout still
// ends on a signal: what its bridge relays from its server then waits for
// a reader that does not come, and must not hold the process's end, as a
// leaseholder's in-process session does not (stdio.Local.Close).
func TestAnAttachedProcessWhoseHostStoppedReadingEndsOnASignal(t *testing.T) {
	a, c, out, _ := attachedToStall(t)
	c.awaitLog("stream open") // the bridge's GET stream is open: what the server says reaches the client on it

	out.stall()
	a.node.server.served.surface.Notify(mcp.LoggingLevelWarning, "majordomus: a note nobody reads")
	select {
	case <-out.blocked:
	case <-time.After(wait):
		t.Fatal("the server's note never reached the client's stdout")
	}
	endsOnASignal(t, c)
}

// A process that takes over for its attached client, whose host has
// stopped reading its stdout, still ends on a signal: what it tells the
// client of the take-over waits for a reader that does not come, and must
// not hold the process's end.
func TestATakeOverWhoseHostStoppedReadingEndsOnASignal(t *testing.T) {
	a, c, out, b := attachedToStall(t)

	out.stall()
	a.node.Signal("SIGTERM")
	a.wait()
	c.awaitLog("took over as the shared server")
	select {
	case <-out.blocked:
	case <-time.After(wait):
		t.Fatal("the take-over was never told to the client")
	}
	c.awaitLog("the shared server is serving") // the machine heard that its server started: the client is seated
	endsOnASignal(t, c)
	if b.holding() == "c" {
		t.Error("the node ended on a signal and kept the lease")
	}
}

// attachedToStall starts a, a leaseholder, and c, attached to it, whose
// client's stdout is out, ready to stall.
func attachedToStall(t *testing.T) (a, c *running, out *stalling, b *board) {
	co := exampleCheckout(t)
	b = newBoard(t)
	a = start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	c = startWith(t, "c", co.fresh(), b, true, func(cfg *Config) {
		cfg.Times.JoinRetry = time.Hour
		out = newStalling(t, cfg.Stdout)
		cfg.Stdout = out
	})
	c.client.initialize()
	c.awaitState(machine.Attached)
	c.client.tool("majordomus_peers", map[string]any{}, nil)
	return a, c, out, b
}

// endsOnASignal sends n SIGTERM, and fails unless it ends, its client's
// stdout unread.
func endsOnASignal(t *testing.T, n *running) {
	t.Helper()
	n.node.Signal("SIGTERM")
	select {
	case res := <-n.done:
		n.done <- res // for the cleanup's wait
	case <-time.After(wait):
		t.Fatalf("the node did not end on a signal while its host did not read its stdout; it is %s", n.node.State())
	}
}
