package node

import (
	"strings"
	"sync"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// A leaseholder's own client's message that comes after the machine heard
// the lease was lost, before its hand-over held the client, waits for the
// hand-over: it is not answered by the server that lost the lease. The
// session's mutex, which the hand-over takes first, holds that window open.
func TestAMessageBeforeTheHandOverWaitsForIt(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.client.tool("majordomus_peers", map[string]any{}, nil) // the board's: the client is seated
	s := a.node.session
	s.mu.Lock()
	unlock := sync.OnceFunc(s.mu.Unlock)
	defer unlock()
	b.set("", "") // removed; a's watch sees it, and the election that follows wins it again
	a.awaitState(machine.LeaseLost)
	a.client.send(map[string]any{"id": 100, "method": "tools/call", "params": map[string]any{"name": "majordomus_server", "arguments": map[string]any{}}})
	held := make(chan struct{})
	go func() { s.router.awaitHeld(); close(held) }()
	for waiting := true; waiting; {
		select {
		case <-held: // the message waits, holding the client's messages
			waiting = false
		case f := <-a.client.frames:
			if f["id"] == float64(100) {
				t.Fatalf("answered before the hand-over: %s", fmtJSON(f))
			}
		}
	}
	unlock()
	if answer := fmtJSON(a.client.answer(100, nil)); strings.Contains(answer, `\"role\":\"lease-lost\"`) {
		t.Fatalf("answered by the server that lost the lease: %s", answer)
	}
}

// A message claimed as the hand-over holds the client (between the claim
// and the lease's answer) waits for what serves next too, and is not
// answered by the session the hand-over retired.
func TestAMessageClaimedAsTheHandOverHoldsWaitsForIt(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.client.tool("majordomus_peers", map[string]any{}, nil) // the board's: the client is seated
	lost := func() {
		b.set("", "") // removed as the lease is asked
		a.awaitState(machine.LeaseLost)
		a.node.session.router.awaitHeld()
	}
	a.lease.asked.Store(&lost)
	a.client.send(map[string]any{"id": 100, "method": "tools/call", "params": map[string]any{"name": "majordomus_server", "arguments": map[string]any{}}})
	if answer := fmtJSON(a.client.answer(100, nil)); strings.Contains(answer, `\"role\":\"lease-lost\"`) {
		t.Fatalf("answered by the server that lost the lease: %s", answer)
	}
}
