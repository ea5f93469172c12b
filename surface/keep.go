package surface

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// Keep makes this surface's history and board the checkout's
// (docs/design.md#nothing-is-lost): st, the state the server before left in
// the lease directory, is merged in — its executions with the calls made
// here while nothing kept them, its announcers listed as departed until
// each is back — and every change from now on is given to sink, a journal's
// record line at a time, before the call that made it is answered (sink
// reports whether the checkout's history keeps it: an own client's call
// it does not keep waits, as one made while nothing kept them), and so
// is each generation of the layer published (the caller continues the
// layer from st.Layer first, [layer.Layer.Continue]). It returns the state
// as merged: what the journal starts from.
func (s *Surface) Keep(st State, sink func(line []byte) bool) State {
	for old, id := range s.Board.renumber() {
		s.log.Info("a peer numbered while the checkout's counter could not be read is numbered anew, as the checkout's", zap.String("peer_before", old), zap.String("peer", id))
		s.Executions.relabel(old, id)
	}
	executions := s.Executions.keep(st.Executions, func(x Execution) bool {
		return sink(encodeRecord(record{Execution: &x}))
	})
	peers := s.Board.keep(st.Peers, func(p Peer) {
		if line := encodeRecord(record{Peer: &p}); len(line) <= maxStateRecord {
			sink(line)
		}
	})
	s.kept.Store(&sink)
	return State{Executions: executions, Peers: peers, Layer: generationOf(s.cfg.Layer.Current())}
}

// Given makes id, which the checkout gave session's client on a shared
// server that took its session in only in part (killed as it did), that
// peer's id here, with the calls recorded here under the id it had: what
// that server journaled of the client (its announcement, its calls) is
// under id, so the client is id wherever it goes next.
func (s *Surface) Given(session, id string) {
	if old := s.Board.PeerID(session); old != "" && old != id && s.Board.Claim(session, id) {
		s.Executions.relabel(old, id)
	}
}

// generationOf is ix's generation as the state records it.
func generationOf(ix *layer.Index) Generation {
	return Generation{Number: ix.Generation, Digest: ix.Digest()}
}

// Unkeep stops giving changes to the sink. Of the calls made from now on,
// only the own client's wait for a later Keep ([Executions]).
func (s *Surface) Unkeep() {
	s.kept.Store(nil)
	s.Executions.unkeep()
	s.Board.unkeep()
}

// announcementOf reads a carried announcement (majordomus_announce's
// arguments) as the tool would take them; nil when it is none, or not one
// the tool would take.
func announcementOf(raw json.RawMessage) *Announcement {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	intent, scope, err := announcementArgs(argsOf(mcp.CallToolRequest{Params: mcp.CallToolParams{Arguments: m}}))
	if err != nil {
		return nil
	}
	return &Announcement{Intent: intent, Scope: scope}
}

// HistoryMeta is the key under which a majordomus_executions call's _meta
// brings the calls its client made where no shared history kept them
// (served alone), as majordomus_executions shows them, oldest first: they
// join this history as the caller's, and the call is not an execution.
const HistoryMeta = "io.majordomus/history"

// GenerationMeta is the key under which that call's _meta may bring the
// highest generation of the layer its client was told: the layer goes on
// past it ([layer.Layer.Continue]), so that the client never sees the
// generation go back.
const GenerationMeta = "io.majordomus/generation"

// tookHistory reports whether a tool call brings a carried session's
// history (HistoryMeta), which it then records, the calls as caller's:
// only calls of a tool this server serves, as no other was made here
// (what a client sends there is no text of its own for the others to read).
// A call keeps the time it was made at, whatever it says: the history is
// in the order calls were recorded, and one brought again is known by it.
func (s *Surface) tookHistory(req mcp.CallToolRequest, caller string, record func(Execution)) bool {
	if req.Params.Name != "majordomus_executions" || req.Params.Meta == nil || req.Params.Meta.AdditionalFields[HistoryMeta] == nil {
		return false
	}
	raw, _ := json.Marshal(req.Params.Meta.AdditionalFields[HistoryMeta])
	var calls []Execution
	_ = json.Unmarshal(raw, &calls)
	for _, x := range calls[max(0, len(calls)-executionsKept):] {
		if s.MCP.GetTool(x.Tool) == nil {
			continue
		}
		// No call takes less than no time.
		x.DurationMS = max(x.DurationMS, 0)
		x.Peer = caller
		record(x) // unless brought again: a server that died as it took them kept them
	}
	if told, _ := req.Params.Meta.AdditionalFields[GenerationMeta].(float64); told > 0 && told < 1<<53 { // a whole number JSON holds exactly
		s.continueLayer(uint64(told))
	}
	return true
}

// continueLayer makes the layer go on past generation told, which a
// carried session's client was told elsewhere, when it is behind it, and
// keeps it; what says the generation changed. A layer at told already is
// left as it is: a server that took over goes on from the same generation
// for the same files.
func (s *Surface) continueLayer(told uint64) {
	l, ok := s.cfg.Layer.(interface{ Continue(uint64, string) bool })
	if !ok || s.cfg.Layer.Current().Generation >= told || !l.Continue(told, "") {
		return
	}
	if sink := s.kept.Load(); sink != nil {
		g := generationOf(s.cfg.Layer.Current())
		(*sink)(encodeRecord(record{Layer: &g}))
	}
	s.tellUpdated([]string{repositoryURI, serverURI})
	s.changes.bump()
}

// carrying reports whether ctx carries a session (Config.Carrying).
func (s *Surface) carrying(ctx context.Context) bool {
	return s.cfg.Carrying != nil && s.cfg.Carrying(ctx)
}

// callOf is the key of the call ctx makes (Config.Call), or "".
func (s *Surface) callOf(ctx context.Context) string {
	if s.cfg.Call == nil {
		return ""
	}
	return s.cfg.Call(ctx)
}

// replayed reports whether req, handled under ctx, is a replayed
// announcement: marked so (ReplayMeta), by what carries a session. Only a
// majordomus_announce call is ever one.
func (s *Surface) replayed(ctx context.Context, req mcp.CallToolRequest) bool {
	if !s.carrying(ctx) || req.Params.Name != announceTool || req.Params.Meta == nil {
		return false
	}
	replay, _ := req.Params.Meta.AdditionalFields[ReplayMeta].(bool)
	return replay
}

// announceTool is the one tool that changes the board.
const announceTool = "majordomus_announce"
