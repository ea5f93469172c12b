package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// answering answers every message with its own bytes.
type answering struct{}

func (answering) Handle(_ context.Context, msg json.RawMessage) []byte { return msg }

func TestWhatWaitsForTheNextAnswerRunsOnceAfterIt(t *testing.T) {
	r := newRouter()
	runs := 0
	r.afterNextAnswer(func() { runs++ })
	r.set(answering{})
	for i := range 3 {
		if a := r.Handle(context.Background(), json.RawMessage(`{"id":1}`)); string(a) != `{"id":1}` {
			t.Fatalf("answered %s", a)
		}
		if runs != 1 {
			t.Fatalf("after answer %d: ran %d times, want once", i+1, runs)
		}
	}
}

// left is a backend that left its server, as a bridge does: every message
// meets its *transport.Gone, and its Done is closed.
type left struct {
	gone   *transport.Gone
	done   chan struct{}
	closed atomic.Int32
}

func newLeft() *left {
	l := &left{gone: &transport.Gone{URL: "http://127.0.0.1:1", Cause: errors.New("the server is gone")}, done: make(chan struct{})}
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

// A backend that left its server is retired by the router, once however
// many messages and watchers meet it: the node hears of it once, with the
// session to carry, the backend is closed, and what met it is answered by
// what serves next.
func TestABackendThatLeftIsReplacedOnceAndClosed(t *testing.T) {
	r := newRouter()
	old := newLeft()
	told := make(chan *transport.Gone, 4)
	r.lost = func(g *transport.Gone) { told <- g }
	r.set(old)
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
	case g := <-told:
		if !errors.Is(g, old.gone.Cause) {
			t.Errorf("the node heard %v", g)
		}
	case <-time.After(wait):
		t.Fatal("the node never heard that the backend left")
	}
	r.set(answering{}) // what the election gives next
	wg.Wait()
	if len(told) != 0 {
		t.Errorf("the node heard %d more times", len(told))
	}
	if old.closed.Load() == 0 {
		t.Error("the backend that left was never closed")
	}
}
