package scenarios

// The board as a sequential specification, against which porcupine checks
// the histories a scenario records (docs/design.md#nothing-is-lost: the
// board and the history are the checkout's, and outlive every process).
//
// What is checked, per operation as a client saw it, call to return:
//
//   - Each peer's record is a register only its own client writes. An
//     announcement that was answered is what every peers read that begins
//     later shows for that peer, whichever server answers it, until the
//     peer announces again — departed or not (a departed announcer stays
//     listed). A peer that never announced shows none. An announcement
//     whose outcome is unknown (its call cut by a kill, or answered
//     "outcome unknown") may take effect at any instant after its call, or
//     never. A tool error leaves the record as it was.
//   - Once a client's leave has returned (its process has exited), no read
//     lists its peer as attached; before that, attached may read either
//     way: after a take-over a live peer is listed departed until it is
//     back. A client is listed at most once.
//   - The execution history only grows, in order: every read of it extends
//     the one before, and shows every tool call answered before the read
//     began (a call may be shown more than once: a call cut by a kill may
//     have run before it was sent again).
//
// What is not: that one peers read is an atomic snapshot across peers
// (each peer is checked on its own, which is what keeps the check fast),
// the overlaps an announcement answers, scopes, times and last_seen, and
// any answer of a server whose lease was taken over (R6 lets it answer its
// own client once more from its own board: the scenario makes no call
// through a continued frozen owner).

import (
	"fmt"
	"maps"
	"slices"

	"github.com/anishathalye/porcupine"
)

// The kinds of board operation a client makes.
const (
	opAnnounce   = "announce"
	opPeers      = "peers"
	opExecutions = "executions"
	opLeave      = "leave"
)

// outcome is what became of an operation.
type outcome int

const (
	answered outcome = iota // answered: it took effect
	refused                 // a tool error: it took no effect
	unknown                 // no answer: it may or may not have taken effect
)

// boardOp is one operation a client made on the board, as recorded.
type boardOp struct {
	Client       string // the client's name; one client, one process, one peer
	Kind         string
	Intent       string // announce: what it said
	Call, Return int64  // nanoseconds since the recording began
	Outcome      outcome
	Caller       string      // peers: the id the board gives the client
	Board        []shownPeer // peers: every peer listed
	History      []execution // executions: oldest first
}

// shownPeer is one peer as a peers read listed it.
type shownPeer struct {
	Client   string
	Intent   string // "" when it announced nothing
	Attached bool
}

// toolOf names the tool an operation calls.
var toolOf = map[string]string{opAnnounce: "majordomus_announce", opPeers: "majordomus_peers", opExecutions: "majordomus_executions"}

// peerInput is an operation on one peer's record; peerOutput what it saw.
type peerInput struct{ peer, kind, intent string }
type peerOutput struct {
	outcome  outcome
	intent   string
	attached bool
	twice    bool // listed more than once
}

// historyInput is a tool call answered (read false) or a read of the
// execution history, whose output is the history shown, oldest first.
type historyInput struct {
	read bool
	call callKey
}
type callKey struct{ tool, peer string }

// boardState is a peer's record (intent, left) or the execution history
// (shown: as the last read showed it; owed: the calls answered so far).
type boardState struct {
	intent string
	left   bool
	shown  []execution
	owed   map[callKey]int
}

// boardModel is the specification the package comment states.
var boardModel = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byPeer := map[string][]porcupine.Operation{}
		for _, op := range ops {
			key := "" // the history
			if in, ok := op.Input.(peerInput); ok {
				key = "peer " + in.peer
			}
			byPeer[key] = append(byPeer[key], op)
		}
		keys := slices.Sorted(maps.Keys(byPeer))
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byPeer[k])
		}
		return out
	},
	Init: func() []any { return []any{boardState{}} },
	Step: func(state, input, output any) []any {
		s := state.(boardState)
		switch in := input.(type) {
		case peerInput:
			return stepPeer(s, in, output.(peerOutput))
		case historyInput:
			return stepHistory(s, in, output)
		}
		return nil
	},
	Equal: func(a, b any) bool {
		x, y := a.(boardState), b.(boardState)
		return x.intent == y.intent && x.left == y.left && slices.Equal(x.shown, y.shown) && maps.Equal(x.owed, y.owed)
	},
	DescribeOperation: func(input, output any) string {
		switch in := input.(type) {
		case peerInput:
			out := output.(peerOutput)
			return fmt.Sprintf("%s %s %q → %d %q attached=%v", in.peer, in.kind, in.intent, out.outcome, out.intent, out.attached)
		case historyInput:
			if in.read {
				shown := output.([]execution)
				return fmt.Sprintf("history read → %d calls, the last %+v", len(shown), shown[max(0, len(shown)-2):])
			}
			return fmt.Sprintf("%s by %s answered", in.call.tool, in.call.peer)
		}
		return fmt.Sprint(input)
	},
}

func stepPeer(s boardState, in peerInput, out peerOutput) []any {
	switch in.kind {
	case opAnnounce:
		applied := s
		applied.intent = in.intent
		switch out.outcome {
		case answered:
			return []any{applied}
		case refused:
			return []any{s}
		default:
			return []any{applied, s}
		}
	case opLeave:
		s.left = true
		return []any{s}
	default: // a read of the peer's record
		if out.twice || out.intent != s.intent || (s.left && out.attached) {
			return nil
		}
		return []any{s}
	}
}

func stepHistory(s boardState, in historyInput, output any) []any {
	if !in.read {
		owed := maps.Clone(s.owed)
		if owed == nil {
			owed = map[callKey]int{}
		}
		owed[in.call]++
		s.owed = owed
		return []any{s}
	}
	shown := output.([]execution)
	if len(shown) < len(s.shown) || !slices.Equal(shown[:len(s.shown)], s.shown) {
		return nil
	}
	for call, n := range s.owed {
		if countCalls(shown, call) < n {
			return nil
		}
	}
	s.shown = shown
	return []any{s}
}

func countCalls(shown []execution, call callKey) int {
	n := 0
	for _, x := range shown {
		if x.Tool == call.tool && x.Peer == call.peer {
			n++
		}
	}
	return n
}
