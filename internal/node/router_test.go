package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
)

// answering answers every message with its own bytes.
type answering struct{}

func (answering) Handle(_ context.Context, msg json.RawMessage) []byte { return msg }

// The interim session answers while nothing was decided to serve the
// client, and never once something was: offered after the router was held
// to carry it onto a bridge, it would answer what the carried session
// never saw (a storm's client then met "tools/call before initialize").
func TestTheInterimSessionAnswersOnlyBeforeAnythingWasDecided(t *testing.T) {
	for _, decided := range []bool{false, true} {
		r := newRouter()
		if decided {
			r.hold() // as carryLocal holds it
		}
		r.offer(answering{})
		patience := make(chan time.Time, 1)
		patience <- time.Time{} // spent already: await only looks
		b, err := r.await(context.Background(), true, patience)
		if got := b != nil; got == decided || (err != nil) != decided {
			t.Fatalf("decided %v: await gave %v, %v", decided, b, err)
		}
	}
}

// left is a backend that left its server, as a bridge does: every message
// meets its *bridge.Gone, and its Done is closed.
type left struct {
	gone   *bridge.Gone
	done   chan struct{}
	closed atomic.Int32
}

func newLeft() *left {
	l := &left{gone: &bridge.Gone{URL: "http://127.0.0.1:1", Cause: errors.New("the server is gone")}, done: make(chan struct{})}
	close(l.done)
	return l
}

func (l *left) Handle(context.Context, json.RawMessage) []byte { return nil }
func (l *left) Relay(context.Context, json.RawMessage) ([]byte, error) {
	return nil, l.gone
}
func (l *left) Done() <-chan struct{} { return l.done }
func (l *left) Err() error            { return l.gone }
func (l *left) Close()                { l.closed.Add(1) }

// hearing is the machine, as the client's session tells it that a bridge
// left.
type hearing chan machine.BridgeFailure

func (h hearing) BridgeFailedWith(f machine.BridgeFailure) { h <- f }

// A backend that left its server is retired by the client's session, once
// however many messages and watchers meet it: the machine hears of it
// once, the session is carried, the backend is closed, and what met it is
// answered by what serves next.
func TestABackendThatLeftIsReplacedOnceAndClosed(t *testing.T) {
	told := make(hearing, 4)
	r := newClientSession(&Node{hostPeer: func() string { return "" }}, told, 0) // no host: it claims no peer id
	old := newLeft()
	old.gone.Session.Peer = "p7"
	r.use(old)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ping := json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
			if a := r.Handle(context.Background(), ping); string(a) != string(ping) {
				t.Errorf("the ping that met the gone backend was answered %s", a)
			}
		})
	}
	select {
	case f := <-told:
		if f.Reason != old.gone.Error() {
			t.Errorf("the machine heard %+v", f)
		}
	case <-time.After(wait):
		t.Fatal("the machine never heard that the backend left")
	}
	r.mu.Lock()
	r.use(answering{}) // what the election gives next
	carried := r.carried
	r.mu.Unlock()
	wg.Wait()
	if len(told) != 0 {
		t.Errorf("the machine heard %d more times", len(told))
	}
	if carried == nil || carried.Peer != "p7" {
		t.Errorf("the session carried is %+v", carried)
	}
	if old.closed.Load() == 0 {
		t.Error("the backend that left was never closed")
	}
}
