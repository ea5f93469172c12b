package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
)

// Convergence: a leaseholder that lost its lease while a bridge used it
// hands its own client over at once, its peer id and announcement carried,
// and the bridge moves to the current server (here, the bridge's own
// take-over). Both end on one board.
func TestALeaseLostLeaseholderHandsItsClientOver(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	id := a.client.initialize()
	a.awaitLog("shared server listening")
	a.client.tool("majordomus_announce", map[string]any{"intent": "moving house"}, nil)
	d := start(t, "d", co.fresh(), b, true)
	d.client.initialize()
	d.awaitState(machine.Attached)
	resume := a.lease.pause() // a elects only once d serves

	b.set("", "") // the lease is gone: a loses it, d will win it
	a.awaitState(machine.LeaseLost)
	d.client.tool("majordomus_peers", map[string]any{}, nil) // answered by a, which says its lease is lost
	d.awaitLog("took over as the shared server")
	a.awaitLog("handing this client over")
	resume()
	a.awaitLog("re-attached to the shared server")
	if got := a.client.caller(); got != id {
		t.Errorf("a's client was %s and is %s after the hand-over", id, got)
	}
	if peers := d.client.tool("majordomus_peers", map[string]any{}, nil); !strings.Contains(peers, "moving house") {
		t.Errorf("the current board lacks the handed-over client: %s", peers)
	}
}

// An announcement the lease-lost leaseholder is answering in process when
// it hands its client over is carried with the client: its client was told
// it took, so the current board shows it, not the one before.
func TestAHandOverCarriesTheAnnouncementBeingAnswered(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("shared server listening")
	a.client.tool("majordomus_announce", map[string]any{"intent": "moving house"}, nil)
	d := start(t, "d", co.fresh(), b, true)
	d.client.initialize()
	d.awaitState(machine.Attached)

	// a's next announcement runs once the hand-over holds a's client
	entered := answersOnceHeld(t, a, "majordomus_announce")
	a.client.send(map[string]any{"id": 100, "method": "tools/call", "params": map[string]any{
		"name": "majordomus_announce", "arguments": map[string]any{"intent": "painting the walls"}}})
	<-entered
	resume := a.lease.pause() // a elects only once d serves
	b.set("", "")
	a.awaitState(machine.LeaseLost)
	a.awaitLog("handing this client over")                   // at once, its server still d's
	d.client.tool("majordomus_peers", map[string]any{}, nil) // answered by a: d moves
	d.awaitLog("took over as the shared server")
	resume()
	a.awaitLog("re-attached to the shared server")
	if answer := a.client.answer(100, nil); answer["result"] == nil {
		t.Fatalf("a's announcement was answered %v", answer)
	}
	if peers := d.client.tool("majordomus_peers", map[string]any{}, nil); !strings.Contains(peers, "painting the walls") {
		t.Errorf("the current board lacks the announcement a's client was answered: %s", peers)
	}
}

// A call the lease-lost leaseholder answers in process as it hands its
// client over joins the checkout's history once, as its client's: on the
// server the client attaches to, also when it is answered only once the
// client was carried there (past the settling), or, when the process wins
// the lease again, in the history it keeps again.
func TestAHandOverCarriesTheCallsBeingAnswered(t *testing.T) {
	for _, c := range []struct{ wins, late bool }{{false, false}, {false, true}, {true, false}} {
		wins := c.wins
		t.Run(fmt.Sprintf("wins again: %v, answered once carried: %v", wins, c.late), func(t *testing.T) {
			co, b := exampleCheckout(t), newBoard(t)
			a := start(t, "a", co, b, true)
			id := a.client.initialize()
			a.awaitLog("shared server listening")
			current := a
			if !wins {
				current = start(t, "d", co.fresh(), b, true)
				current.client.initialize()
				current.awaitState(machine.Attached)
			}
			release, entered := make(chan struct{}), (<-chan struct{})(nil)
			if c.late {
				entered = answersHeldUntil(t, a, "majordomus_list", release)
			} else {
				entered = answersOnceHeld(t, a, "majordomus_list")
			}
			a.client.send(map[string]any{"id": 100, "method": "tools/call", "params": map[string]any{
				"name": "majordomus_list", "arguments": map[string]any{}}})
			<-entered
			resume := a.lease.pause() // a elects only once the current server serves
			b.set("", "")
			a.awaitLog("handing this client over")
			if !wins {
				current.client.tool("majordomus_peers", map[string]any{}, nil) // answered by a: d moves
				current.awaitLog("took over as the shared server")
			}
			resume()
			a.awaitLog(map[bool]string{false: "re-attached to the shared server", true: "took over as the shared server"}[wins])
			if c.late {
				close(release)
			}
			if answer := a.client.answer(100, nil); answer["result"] == nil {
				t.Fatalf("a's call was answered %v", answer)
			}
			var history struct{ Executions []surface.Execution }
			if err := json.Unmarshal([]byte(current.client.tool("majordomus_executions", map[string]any{}, nil)), &history); err != nil {
				t.Fatal(err)
			}
			var lists []surface.Execution
			for _, x := range history.Executions {
				if x.Tool == "majordomus_list" {
					lists = append(lists, x)
				}
			}
			if len(lists) != 1 || lists[0].Peer != id {
				t.Errorf("the history holds %+v; want the one majordomus_list of %s", lists, id)
			}
		})
	}
}

// A call the lease-lost leaseholder answered as it handed its client over
// joins the checkout's history once when its process wins the lease again
// and loses it before it seats the client: in the state that term wrote
// (which the next server loads), or, when the lease was taken before the
// term could write it, carried with the client to the next server.
func TestACallAShortTermKeptIsInTheHistoryOnce(t *testing.T) {
	for _, written := range []bool{false, true} {
		t.Run(fmt.Sprintf("state written: %v", written), func(t *testing.T) {
			co, b := exampleCheckout(t), newBoard(t)
			elsewhere := newBoard(t) // d's own lease: a reaches d's server through b's
			d := start(t, "d", co.fresh(), elsewhere, true)
			d.client.initialize()
			d.awaitLog("shared server listening")
			a := start(t, "a", co, b, true)
			a.client.initialize()
			a.awaitLog("shared server listening")
			entered := answersOnceHeld(t, a, "majordomus_list")
			a.client.send(map[string]any{"id": 100, "method": "tools/call", "params": map[string]any{
				"name": "majordomus_list", "arguments": map[string]any{}}})
			<-entered
			taken := func() { b.set("d", elsewhere.url) } // before a's new term seats the client
			b.mu.Lock()
			if written {
				b.publish = sync.OnceFunc(taken) // once the term wrote its state
			} else {
				b.gate, b.attempts = make(chan struct{}), make(chan string, 4)
			}
			b.mu.Unlock()
			b.set("", "") // a loses its lease, hands its client over and wins it again
			if !written {
				<-b.attempts
				taken() // before the term writes its state
				close(b.gate)
			}
			a.awaitLog("re-attached to the shared server")
			if answer := a.client.answer(100, nil); answer["result"] == nil {
				t.Fatalf("a's call was answered %v", answer)
			}
			state, _ := os.ReadFile(registry.StatePath(b.path))
			var history struct{ Executions []surface.Execution }
			if err := json.Unmarshal([]byte(d.client.tool("majordomus_executions", map[string]any{}, nil)), &history); err != nil {
				t.Fatal(err)
			}
			carried := 0
			for _, x := range history.Executions {
				if x.Tool == "majordomus_list" {
					carried++
				}
			}
			if inState := bytes.Count(state, []byte(`"majordomus_list"`)); inState+carried != 1 || (inState == 1) != written {
				t.Errorf("the call is %d times in the state a's term wrote and carried %d times to d; want once, in the state only when it was written", inState, carried)
			}
		})
	}
}

// answersOnceHeld makes node n's tool answer its next call only once the
// hand-over holds n's client, and returns what is closed as the call is
// entered.
func answersOnceHeld(t *testing.T, n *running, tool string) <-chan struct{} {
	t.Helper()
	release := make(chan struct{})
	entered := answersHeldUntil(t, n, tool, release)
	go func() {
		<-entered
		n.node.session.router.awaitHeld()
		close(release)
	}()
	return entered
}

// answersHeldUntil makes node n's tool answer its next call only once
// release is closed, and returns what is closed as the call is entered.
func answersHeldUntil(t *testing.T, n *running, tool string, release <-chan struct{}) <-chan struct{} {
	t.Helper()
	srv, err := n.node.load()
	if err != nil {
		t.Fatal(err)
	}
	handler, entered := srv.surface.MCP.GetTool(tool), make(chan struct{})
	srv.surface.MCP.AddTool(handler.Tool, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(entered)
		<-release
		return handler.Handler(ctx, req)
	})
	return entered
}

// awaitHeld waits until nothing serves the client: its messages are held.
func (r *router) awaitHeld() {
	for {
		r.mu.Lock()
		current, changed := r.current, r.changed
		r.mu.Unlock()
		if current == nil {
			return
		}
		<-changed
	}
}

// What the machine hears of a failed bridge: a full server says so itself,
// with what it asked, however deep in the replay's error it was met; and
// a client still served alone (the bridge never took it over) says so.
func TestBridgeFailureSaysAFullServer(t *testing.T) {
	s := &clientSession{}
	full := &bridge.FullServer{URL: "http://127.0.0.1:8741", Sessions: 4, RetryAfter: 5 * time.Second}
	got := s.failure("carrying the client's session: unavailable", fmt.Errorf("replaying: %w", full))
	want := machine.BridgeFailure{Reason: "the shared server at http://127.0.0.1:8741 is full (4 sessions)", URL: full.URL, Full: true, RetryAfter: 5 * time.Second}
	if got != want {
		t.Errorf("failure(full) = %+v, want %+v", got, want)
	}
	plain := errors.New("the shared server at http://127.0.0.1:8741 is unreachable: connection refused")
	if got := s.failure(plain.Error(), plain); got != (machine.BridgeFailure{Reason: plain.Error()}) {
		t.Errorf("failure(unreachable) = %+v", got)
	}
	why := "the lease directory is a file"
	s.alone.Store(&why)
	if got := s.failure("the replay failed", nil); got != (machine.BridgeFailure{Reason: "the replay failed", Alone: true}) {
		t.Errorf("failure(no cause, served alone) = %+v", got)
	}
}

// A call the client cancels while a hand-over holds its messages, the
// in-process session still answering it, gets what it gets in every mode:
// a 2026-07-28 one nothing (that revision answers a cancelled request
// nothing), a legacy one its answer (mcp-go answers it). The cancel waits
// behind the hold, and reaches what serves next, which never had the call.
func TestACallCancelledWhileItsHandOverHoldsTheClientGetsWhatEveryModeGives(t *testing.T) {
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}`
	for _, modern := range []bool{true, false} {
		t.Run(fmt.Sprintf("2026-07-28: %v", modern), func(t *testing.T) {
			co, b := exampleCheckout(t), newBoard(t)
			a := start(t, "a", co, b, true)
			meta := ""
			if modern {
				meta = "," + modernMeta
			} else {
				a.client.initialize()
			}
			s := a.node.session
			// the board's answer comes from the shared server: a serves its client
			peers := json.RawMessage(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"majordomus_peers","arguments":{}` + meta + `}}`)
			if answer := s.Handle(context.Background(), peers); !bytes.Contains(answer, []byte(`"result"`)) {
				t.Fatalf("a's peers answered %s", answer)
			}
			a.awaitLog("shared server listening")
			d := start(t, "d", co.fresh(), b, true)
			d.client.initialize()
			d.awaitState(machine.Attached)

			release := make(chan struct{})
			entered := answersHeldUntil(t, a, "majordomus_list", release)
			answered := make(chan []byte, 1)
			go func() {
				answered <- s.Handle(context.Background(), json.RawMessage(
					`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"majordomus_list","arguments":{}`+meta+`}}`))
			}()
			<-entered
			resume := a.lease.pause() // a elects only once d serves
			b.set("", "")
			s.router.awaitHeld() // the hand-over holds a's client: the call is still answered in process
			cancelled := make(chan []byte, 1)
			go func() {
				cancelled <- s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":100}}`))
			}()
			a.awaitLog("handing this client over")
			d.client.tool("majordomus_peers", map[string]any{}, nil) // answered by a: d moves
			d.awaitLog("took over as the shared server")
			resume()
			a.awaitLog("re-attached to the shared server")
			select {
			case <-cancelled: // it reached what serves next
			case <-time.After(wait):
				t.Fatal("the cancel still waits")
			}
			close(release)
			var answer []byte
			select {
			case answer = <-answered:
			case <-time.After(wait):
				t.Fatal("the cancelled call still waits")
			}
			if modern && answer != nil {
				t.Errorf("the cancelled 2026-07-28 call was answered %s", answer)
			}
			if !modern && !bytes.Contains(answer, []byte(`"result"`)) {
				t.Errorf("the cancelled legacy call was answered %s; want its result, as every mode gives it", answer)
			}
		})
	}
}

// A 2026-07-28 call its client cancels once what serves it was claimed
// for it, before it reached it (the lease is asked meanwhile), is
// answered nothing: the cancel reaches the in-process session first,
// which had nothing to cancel yet.
func TestAModernCallCancelledAsItIsClaimedIsAnsweredNothing(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	s := a.node.session
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}`
	peers := json.RawMessage(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"majordomus_peers","arguments":{},` + meta + `}}`)
	if answer := s.Handle(context.Background(), peers); !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("a's peers answered %s", answer) // the board's: the client is seated
	}
	var cancel func()
	cancel = func() { // as the lease is asked for the call, claimed
		if !s.router.claimed() {
			a.lease.asked.Store(&cancel) // not the call's asking
			return
		}
		s.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":100}}`))
	}
	a.lease.asked.Store(&cancel)
	answer := s.Handle(context.Background(), json.RawMessage(
		`{"jsonrpc":"2.0","id":100,"method":"tools/call","params":{"name":"majordomus_list","arguments":{},`+meta+`}}`))
	if a.lease.asked.Load() != nil {
		t.Fatal("the lease was never asked for the call")
	}
	if answer != nil {
		t.Errorf("the cancelled 2026-07-28 call was answered %s", answer)
	}
}

// claimed reports whether what serves the client is answering a message.
func (r *router) claimed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy[r.current] > 0
}
