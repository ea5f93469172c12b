package scenarios

// A recorded history as porcupine's operations on boardModel, its check,
// and the proof that the check rejects a history that lost an announcement.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// unknownReturn is the return of an operation that never returned.
const unknownReturn = math.MaxInt64

// boardHistory is ops as porcupine's operations on boardModel: an
// announcement and a leave are one each on their peer's record, a peers
// read one on every client's record, and every tool call answered one on
// the history (a read of it another). A read that was not answered says
// nothing and is left out. It fails if a client's peer id changed.
func boardHistory(ops []boardOp) ([]porcupine.Operation, error) {
	ids, clients := map[string]string{}, clientsOf(ops)
	for _, op := range ops {
		if op.Kind != opPeers || op.Outcome != answered {
			continue
		}
		if id, ok := ids[op.Client]; ok && id != op.Caller {
			return nil, fmt.Errorf("%s was %s on the board and then %s", op.Client, id, op.Caller)
		}
		ids[op.Client] = op.Caller
	}
	var out []porcupine.Operation
	add := func(op boardOp, in, output any) {
		ret := op.Return
		if op.Outcome == unknown {
			ret = unknownReturn
		}
		out = append(out, porcupine.Operation{ClientId: slices.Index(clients, op.Client), Input: in, Call: op.Call, Output: output, Return: ret})
	}
	for _, op := range ops {
		switch op.Kind {
		case opAnnounce:
			add(op, peerInput{op.Client, opAnnounce, op.Intent}, peerOutput{outcome: op.Outcome})
		case opLeave:
			add(op, peerInput{op.Client, opLeave, ""}, peerOutput{outcome: op.Outcome})
		case opPeers:
			if op.Outcome == answered {
				for _, c := range clients {
					add(op, peerInput{c, opPeers, ""}, shownAs(op.Board, c))
				}
			}
		case opExecutions:
			if op.Outcome == answered {
				add(op, historyInput{read: true}, op.History)
			}
		}
		if id := ids[op.Client]; op.Outcome == answered && op.Kind != opLeave && id != "" {
			add(op, historyInput{call: callKey{toolOf[op.Kind], id}}, nil)
		}
	}
	return out, nil
}

// shownAs is what a board listed of client's peer.
func shownAs(board []shownPeer, client string) peerOutput {
	var out peerOutput
	seen := false
	for _, p := range board {
		if p.Client == client {
			out.twice = seen
			out.intent, out.attached, seen = p.Intent, p.Attached, true
		}
	}
	return out
}

// checkBoardHistory says whether ops are linearizable; when they are
// not, why names, of the first partition no order explains, the last
// operations of the longest order found and those it could not place.
func checkBoardHistory(ops []boardOp) (result porcupine.CheckResult, why string, err error) {
	history, err := boardHistory(ops)
	if err != nil {
		return porcupine.Illegal, "", err
	}
	model := boardModel.ToModel()
	if result = porcupine.CheckOperationsTimeout(model, history, checkBound); result == porcupine.Ok {
		return result, "", nil
	}
	clients := clientsOf(ops)
	describe := func(op porcupine.Operation) string {
		ret := "never"
		if op.Return != unknownReturn {
			ret = fmt.Sprint(op.Return)
		}
		return fmt.Sprintf("  %d..%s %s: %s\n", op.Call, ret, clients[op.ClientId], model.DescribeOperation(op.Input, op.Output))
	}
	for _, part := range model.Partition(history) {
		res, info := porcupine.CheckOperationsVerbose(model, part, checkBound)
		if res == porcupine.Ok {
			continue
		}
		var longest []int // indices into part
		for _, l := range info.PartialLinearizations()[0] {
			if len(l) > len(longest) {
				longest = l
			}
		}
		var b strings.Builder
		b.WriteString("the longest order found ends with:\n")
		for _, i := range longest[max(0, len(longest)-4):] {
			b.WriteString(describe(part[i]))
		}
		b.WriteString("and cannot go on with any of:\n")
		var rest []porcupine.Operation
		for i, op := range part {
			if !slices.Contains(longest, i) {
				rest = append(rest, op)
			}
		}
		slices.SortFunc(rest, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
		for _, op := range rest[:min(len(rest), 6)] {
			b.WriteString(describe(op))
		}
		return result, b.String(), nil
	}
	return result, "", nil
}

// checkBound bounds one check: a history of a few hundred operations
// takes well under a second; Unknown (the bound reached) fails too.
const checkBound = 30 * time.Second

func clientsOf(ops []boardOp) []string {
	var clients []string
	for _, op := range ops {
		if !slices.Contains(clients, op.Client) {
			clients = append(clients, op.Client)
		}
	}
	sort.Strings(clients)
	return clients
}

// loseAnnouncement is ops with the effect of one answered announcement
// removed, as a server that failed to carry it would show it: the last
// one that a peers read begun after its answer shows, which every read
// showing it then shows as the peer's announcement before it. It reports
// false when ops hold no such announcement.
func loseAnnouncement(ops []boardOp) ([]boardOp, bool) {
	before := map[string]string{} // client → its announcement before the one lost
	lost, prior := -1, ""
	for i, op := range ops {
		if op.Kind != opAnnounce || op.Outcome != answered {
			continue
		}
		if seenAfter(ops, op) {
			lost, prior = i, before[op.Client]
		}
		before[op.Client] = op.Intent
	}
	if lost < 0 {
		return nil, false
	}
	a := ops[lost]
	out := slices.Clone(ops)
	for i, op := range out {
		if op.Kind != opPeers {
			continue
		}
		board := slices.Clone(op.Board)
		for j, p := range board {
			if p.Client == a.Client && p.Intent == a.Intent {
				board[j].Intent = prior
			}
		}
		out[i].Board = board
	}
	return out, true
}

// seenAfter reports whether a peers read begun after a's answer shows it.
func seenAfter(ops []boardOp, a boardOp) bool {
	for _, op := range ops {
		if op.Kind == opPeers && op.Outcome == answered && op.Call > a.Return && shownAs(op.Board, a.Client).intent == a.Intent {
			return true
		}
	}
	return false
}

// A history with one answered announcement lost is not linearizable, nor
// one whose execution history lost an answered call, nor one that lists a
// peer attached after its client left; the same history intact is.
func TestABoardHistoryThatLosesAnAnnouncementIsNotLinearizable(t *testing.T) {
	board := func(a string, attached bool) []shownPeer {
		return []shownPeer{{Client: "a", Intent: a, Attached: attached}, {Client: "b", Attached: true}}
	}
	call := func(tool, peer, at string) execution { return execution{Tool: tool, Peer: peer, At: at, OK: true} }
	x1 := call("majordomus_peers", "p1", "1")
	x2 := call("majordomus_announce", "p1", "2")
	x3 := call("majordomus_peers", "p2", "3")
	x4 := call("majordomus_announce", "p1", "4")
	intact := []boardOp{
		{Client: "a", Kind: opPeers, Call: 0, Return: 10, Caller: "p1", Board: board("", true)},
		{Client: "a", Kind: opAnnounce, Intent: "the parser", Call: 20, Return: 30},
		{Client: "b", Kind: opPeers, Call: 25, Return: 40, Caller: "p2", Board: board("the parser", true)},
		{Client: "a", Kind: opAnnounce, Intent: "the tests", Call: 50, Return: 60},
		{Client: "b", Kind: opAnnounce, Intent: "the docs", Call: 55, Outcome: unknown},
		{Client: "a", Kind: opLeave, Call: 70, Return: 80},
		{Client: "b", Kind: opExecutions, Call: 90, Return: 100, History: []execution{x1, x2, x3, x4}},
		{Client: "b", Kind: opPeers, Call: 110, Return: 120, Caller: "p2", Board: board("the tests", false)},
	}
	if result, why, err := checkBoardHistory(intact); result != porcupine.Ok || err != nil {
		t.Fatalf("the intact history is %v (%v):\n%s", result, err, why)
	}
	lostAnnouncement, ok := loseAnnouncement(intact)
	if !ok {
		t.Fatal("no announcement to lose")
	}
	lostCall := slices.Clone(intact)
	lostCall[6].History = []execution{x1, x2, x3}
	attachedAfterLeaving := slices.Clone(intact)
	attachedAfterLeaving[7].Board = board("the tests", true)
	for name, ops := range map[string][]boardOp{"lost announcement": lostAnnouncement, "lost call": lostCall, "attached after leaving": attachedAfterLeaving} {
		if result, _, err := checkBoardHistory(ops); result != porcupine.Illegal || err != nil {
			t.Errorf("the history with a %s is %v (%v), want illegal", name, result, err)
		}
	}
}
