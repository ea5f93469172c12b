package node

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
	"github.com/mark3labs/mcp-go/mcp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"go.uber.org/zap"
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
		b, err := r.await(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), true, patience)
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

// initializedSession is a client's session whose client has initialized,
// so that what it sends goes to what serves it; with no host, so that it
// claims no peer id.
func initializedSession(told hearing) *clientSession {
	s := newClientSession(&Node{hostPeer: func() string { return "" }}, told, 0)
	s.greeting.opened.Store(true)
	return s
}

// A backend that left its server is retired by the client's session, once
// however many messages and watchers meet it: the machine hears of it
// once, the session is carried, the backend is closed, and what met it is
// answered by what serves next.
func TestABackendThatLeftIsReplacedOnceAndClosed(t *testing.T) {
	told := make(hearing, 4)
	r := initializedSession(told)
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

// handedOn is an in-process session closed under a listen, as a hand-over
// closes it: the listen is to go on with what serves next.
type handedOn struct {
	s       *clientSession
	relayed chan struct{}
}

func (h handedOn) Handle(context.Context, json.RawMessage) []byte { return nil }
func (h handedOn) Relay(context.Context, json.RawMessage) ([]byte, error) {
	h.s.router.hold() // nothing serves until the election says what does
	close(h.relayed)
	return nil, stdio.ErrMoved
}

// recording is what serves next, noting what reaches it.
type recording struct{ got chan json.RawMessage }

func (r recording) Handle(_ context.Context, msg json.RawMessage) []byte {
	r.got <- msg
	return nil
}

// A listen the client cancels while it moves to what serves next is
// answered nothing, and never reaches it: the cancel would find nothing to
// cancel there, and the listen would go on.
func TestAListenCancelledAsItMovesNeverArrives(t *testing.T) {
	s := initializedSession(make(hearing, 1))
	h := handedOn{s: s, relayed: make(chan struct{})}
	s.use(h)
	listen := json.RawMessage(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{}}`)
	answered := make(chan []byte, 1)
	go func() { answered <- s.Handle(context.Background(), listen) }()
	<-h.relayed // it moves on, to what serves next
	go s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`))
	select {
	case a := <-answered:
		if a != nil {
			t.Fatalf("the cancelled listen was answered %s", a)
		}
	case <-time.After(wait):
		t.Fatal("the cancelled listen still waits")
	}
	if got := reachedNext(s, mcp.MethodSubscriptionsListen); got != nil {
		t.Fatalf("the cancelled listen reached what serves next: %s", got)
	}
}

// reachedNext hands s on to what serves next and returns the first
// message of method that reaches it, before a marker sent after them all;
// nil for none.
func reachedNext(s *clientSession, method mcp.MCPMethod) json.RawMessage {
	next := recording{got: make(chan json.RawMessage, 64)}
	s.mu.Lock()
	s.use(next)
	s.mu.Unlock()
	s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	for got := range next.got {
		switch {
		case wire.IsMethod(got, method):
			return got
		case wire.IsMethod(got, mcp.MethodNotificationInitialized):
			return nil
		}
	}
	return nil
}

// blocked answers nothing until released: a listen under way.
type blocked struct{ entered, release chan struct{} }

func (b blocked) Handle(context.Context, json.RawMessage) []byte {
	close(b.entered)
	<-b.release
	return nil
}

// A listen keeps what serves the client busy with nothing: a hand-over,
// which settles the messages under way first, does not wait for it (it
// moves on with the client).
func TestAListenKeepsNoBackendBusy(t *testing.T) {
	r := newRouter()
	b := blocked{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(b.release)
	r.set(b)
	listen := json.RawMessage(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{}}`)
	go func() {
		if got, err := r.claim(context.Background(), listen, 0); err == nil {
			r.relay(context.Background(), got, listen)
		}
	}()
	<-b.entered
	r.hold()
	settled := make(chan struct{})
	go func() {
		r.settle(context.Background(), b)
		close(settled)
	}()
	select {
	case <-settled:
	case <-time.After(wait):
		t.Fatal("settling waited for the listen")
	}
}

// A request the client cancels while it waits for something to serve it
// (an election runs) is answered nothing, and never reaches what serves
// next, where it would run: nothing there had it to cancel.
func TestARequestCancelledWhileItWaitsIsSentNowhere(t *testing.T) {
	s := initializedSession(make(hearing, 1))
	h := handedOn{s: s, relayed: make(chan struct{})}
	s.use(h)
	call := json.RawMessage(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"majordomus_announce"}}`)
	answered := make(chan []byte, 1)
	go func() { answered <- s.Handle(context.Background(), call) }()
	<-h.relayed // it waits for what serves next
	cancel := json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`)
	tick := time.NewTicker(time.Millisecond) // until the waiting request hears it
	defer tick.Stop()
	deadline := time.After(wait)
	for done := false; !done; {
		go s.Handle(context.Background(), cancel)
		select {
		case a := <-answered:
			if a != nil {
				t.Fatalf("the cancelled request was answered %s", a)
			}
			done = true
		case <-tick.C:
		case <-deadline:
			t.Fatal("the cancelled request still waits")
		}
	}
	if got := reachedNext(s, mcp.MethodToolsCall); got != nil {
		t.Fatalf("the cancelled request reached what serves next: %s", got)
	}
}

// handsOverAndCancels is the machine, which hands the client over to next
// as it hears that a bridge left, and the client, which cancels its
// request then: after the request met the bridge that left, before it is
// given to next.
type handsOverAndCancels struct {
	s      *clientSession
	next   wire.Backend
	cancel json.RawMessage
}

func (h *handsOverAndCancels) BridgeFailedWith(machine.BridgeFailure) {
	h.s.mu.Lock()
	h.s.use(h.next)
	h.s.mu.Unlock()
	h.s.Handle(context.Background(), h.cancel) // reaches next: it had nothing to cancel
}

// A 2026-07-28 request its client cancels as the bridge it met leaves its
// server, before it is sent again to what serves next, is answered
// nothing: what answers it there never heard the cancel, which came first.
func TestAModernRequestCancelledAsItsBridgeLeavesIsAnsweredNothing(t *testing.T) {
	h := &handsOverAndCancels{next: answering{},
		cancel: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)}
	s := newClientSession(&Node{hostPeer: func() string { return "" }, log: zap.NewNop()}, h, 0)
	s.greeting.opened.Store(true)
	h.s = s
	s.router.set(newLeft()) // served by a bridge that left its server
	read := json.RawMessage(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"majordomus://repository",` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	if a := s.Handle(context.Background(), read); a != nil {
		t.Fatalf("the request its client cancelled as its bridge left was answered %s", a)
	}
}

// A request its client cancels as the bridge it met leaves its server,
// before it is sent again, is not sent again, of either revision: what
// serves next would run it (a tool call with its effects), though its
// client cancelled it before it was sent there; the cancel, which came
// first, found nothing there to cancel.
func TestARequestCancelledAsItsBridgeLeavesIsNotSentAgain(t *testing.T) {
	for _, meta := range []string{``, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`} {
		next := recording{got: make(chan json.RawMessage, 64)}
		h := &handsOverAndCancels{next: next,
			cancel: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5` + meta + `}}`)}
		s := newClientSession(&Node{hostPeer: func() string { return "" }, log: zap.NewNop()}, h, 0)
		s.greeting.opened.Store(true)
		h.s = s
		s.router.set(newLeft()) // served by a bridge that left its server
		read := json.RawMessage(`{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"majordomus://repository"` + meta + `}}`)
		s.Handle(context.Background(), read)
		close(next.got)
		for got := range next.got {
			if wire.IsMethod(got, mcp.MethodResourcesRead) {
				t.Errorf("meta %q: the request its client cancelled as its bridge left was sent again to what serves next", meta)
			}
		}
	}
}
