package carry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Ids of the requests a carried session is opened again with. Their
// answers are never shown to the client.
const (
	ReinitializeID = "majordomus-bridge-reinitialize"
	AnnounceID     = "majordomus-bridge-announce"
	historyID      = "majordomus-bridge-history"
	sightID        = "majordomus-bridge-sight"
)

// Session is what a client's session is made of, to be carried onto
// another backend after a failover.
type Session struct {
	Initialize json.RawMessage // the client's initialize request params; nil before it initialized
	Announce   json.RawMessage // arguments of its last successful majordomus_announce, or nil
	Protocol   string          // the protocol version its initialize negotiated
	// SafeTools says, for each tool whose annotations the bridge learned,
	// whether resending it is harmless, so that the next bridge knows too.
	SafeTools map[string]bool
	// Peer is the client's peer id, which its session claims wherever it
	// is opened again.
	Peer string
	// Left is the session a bridge left on the server at LeftURL, which a
	// bridge to that server ends before it opens the session again there:
	// the client's peer id is then free to claim.
	Left, LeftURL string
	// Meta is the _meta of a 2026-07-28 client's last request (it has no
	// initialize): how it says who it is, for its announcement made again.
	Meta json.RawMessage
	// Heard is what it asked to hear: subscriptions, its logging level.
	Heard Hearing
	// History is the calls it made where no shared history kept them
	// (served alone), oldest first, as the server that answered them
	// recorded them: the next server takes them into its own, as this
	// client's.
	History json.RawMessage
	// Generation is the highest generation of the layer its client was
	// told (majordomus_repository): what serves it next goes on past it,
	// so that it never sees the generation go back.
	Generation uint64
}

// Replay opens the carried session on b: initialize (private id, answer
// dropped) claiming the peer id and bringing the announcement, then
// notifications/initialized, then — only when b did not take it with the
// session — the announcement, marked as a replay, then what the client
// asked to hear. A 2026-07-28 client, which never initialized, has its
// announcement made again. Then b is given the client's history, in a
// majordomus_executions call marked with it, which is not an execution.
func (c Session) Replay(ctx context.Context, b wire.Backend) error {
	ctx = WithCarrying(ctx) // its marks are heeded
	replay := c.reopen
	if len(c.Initialize) == 0 {
		replay = c.replayModern
	}
	if err := replay(ctx, b); err != nil || len(c.History) == 0 && c.Generation == 0 {
		return err
	}
	history := c.History
	if len(history) == 0 {
		history = json.RawMessage("[]")
	}
	return giveHistory(ctx, b, c.Meta, history, c.Generation)
}

// GiveHistory gives b calls its client made where no shared history kept
// them, as majordomus_executions shows them, in a call marked with them,
// which is not an execution; meta is a 2026-07-28 client's last _meta.
func GiveHistory(ctx context.Context, b wire.Backend, meta, history json.RawMessage) error {
	return giveHistory(ctx, b, meta, history, 0)
}

// giveHistory is GiveHistory bringing, when not 0, the highest generation
// of the layer the client was told, which b's layer goes on past.
func giveHistory(ctx context.Context, b wire.Backend, meta, history json.RawMessage, generation uint64) error {
	ctx = WithCarrying(ctx) // its mark is heeded
	if generation > 0 {
		fields := map[string]json.RawMessage{}
		_ = json.Unmarshal(meta, &fields)
		fields[generationMeta], _ = json.Marshal(generation)
		meta, _ = json.Marshal(fields)
	}
	if err := wire.AnswerError(b.Handle(ctx, callFrame(historyID, historyTool, nil, meta, historyMeta, history))); err != nil {
		return fmt.Errorf("giving the server the calls the client made alone: %w", err)
	}
	return nil
}

// reopen is Replay's opening of a client that initialized.
func (c Session) reopen(ctx context.Context, b wire.Backend) error {
	opening := WithAnnouncement(WithPeerClaim(ctx, c.Peer), c.Announce) // the session opens as it was
	answer := b.Handle(opening, wire.RequestFrame(ReinitializeID, "initialize", c.Initialize))
	if err := wire.AnswerError(answer); err != nil {
		return fmt.Errorf("re-initializing the client's session: %w", err)
	}
	b.Handle(ctx, InitializedFrame)
	if _, announced := Opened(answer); len(c.Announce) > 0 && !announced {
		if err := announceReplayed(b.Handle(ctx, AnnounceFrame(c.Announce))); err != nil {
			return err
		}
	}
	for _, frame := range c.Heard.ReplayFrames() {
		if err := wire.AnswerError(b.Handle(ctx, frame)); err != nil {
			return fmt.Errorf("asking again for what the client asked to hear: %w", err)
		}
	}
	return nil
}

// replayModern makes a 2026-07-28 client's announcement again on b, in the
// client's name (its last _meta): such a client has no session to open,
// and its peer id goes with the backend (Bridge: Peer; Local: claimed).
// One that made none is named to b by a server/discover in its name (the
// revision has no ping), so that a board shows who it is before it speaks
// again.
func (c Session) replayModern(ctx context.Context, b wire.Backend) error {
	if len(c.Meta) == 0 {
		return nil
	}
	if len(c.Announce) == 0 {
		params, _ := json.Marshal(struct {
			Meta json.RawMessage `json:"_meta"`
		}{c.Meta})
		if err := wire.AnswerError(b.Handle(ctx, wire.RequestFrame(sightID, string(mcp.MethodServerDiscover), params))); err != nil {
			return fmt.Errorf("naming the client to the server: %w", err)
		}
		return nil
	}
	return announceReplayed(b.Handle(ctx, callFrame(AnnounceID, AnnounceTool, c.Announce, c.Meta, replayMeta, json.RawMessage("true"))))
}

// announceReplayed is the error of a replayed announcement's answer. One the
// server refuses as a tool error (over the bounds a later version keeps)
// stays behind, and the session goes on without it.
func announceReplayed(answer []byte) error {
	if err := wire.AnswerError(answer); err != nil && !errors.Is(err, wire.ErrToolFailed) {
		return fmt.Errorf("replaying the client's announcement: %w", err)
	}
	return nil
}

// InitializedFrame ends the opening of a session replayed.
var InitializedFrame = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// AnnounceFrame is the replay of a carried announcement, marked as one:
// bookkeeping, not an execution.
func AnnounceFrame(args json.RawMessage) []byte {
	return callFrame(AnnounceID, AnnounceTool, args, nil, replayMeta, json.RawMessage("true"))
}

// callFrame is a tools/call of tool with args, request id, whose _meta is
// meta (a 2026-07-28 client's, in whose name it is made; nil: none) with
// key set to value.
func callFrame(id, tool string, args, meta json.RawMessage, key string, value json.RawMessage) []byte {
	fields := map[string]json.RawMessage{}
	_ = json.Unmarshal(meta, &fields)
	fields[key] = value
	params, _ := json.Marshal(struct {
		Name      string                     `json:"name"`
		Arguments json.RawMessage            `json:"arguments,omitempty"`
		Meta      map[string]json.RawMessage `json:"_meta"`
	}{tool, args, fields})
	return wire.RequestFrame(id, string(mcp.MethodToolsCall), params)
}

// SafeToResend records in safe, for each tool of a tools/list result,
// whether running it twice is harmless (its hints say read-only or
// idempotent), and returns the result's next cursor. A bridge and a local
// session both learn it, so that whatever serves the client next knows.
func SafeToResend(safe map[string]bool, result json.RawMessage) (nextCursor string) {
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly   *bool `json:"readOnlyHint"`
				Idempotent *bool `json:"idempotentHint"`
			} `json:"annotations"`
		} `json:"tools"`
		NextCursor string `json:"nextCursor"`
	}
	_ = json.Unmarshal(result, &r)
	for _, t := range r.Tools {
		a := t.Annotations
		safe[t.Name] = (a.ReadOnly != nil && *a.ReadOnly) || (a.Idempotent != nil && *a.Idempotent)
	}
	return r.NextCursor
}

// TellsGeneration reports whether a request of method (a call of tool, or
// a read of the resource its params name) is answered with the layer's
// generation: majordomus_repository, majordomus_server and their
// resources all say it, and a client told it by any is told it.
func TellsGeneration(method, tool string, params json.RawMessage) bool {
	switch method {
	case string(mcp.MethodToolsCall):
		return tool == RepositoryTool || tool == ServerTool
	case string(mcp.MethodResourcesRead):
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(params, &p)
		return p.URI == repositoryURI || p.URI == serverURI
	}
	return false
}

// ToldGeneration is the generation of the layer a result of a request
// that TellsGeneration tells (a tool's, or a resource's contents), or 0.
func ToldGeneration(result json.RawMessage) uint64 {
	var r struct {
		StructuredContent struct {
			Generation uint64 `json:"generation"`
		} `json:"structuredContent"`
		Contents []struct {
			Text string `json:"text"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(result, &r)
	told := r.StructuredContent.Generation
	for _, c := range r.Contents {
		var v struct {
			Generation uint64 `json:"generation"`
		}
		if json.Unmarshal([]byte(c.Text), &v) == nil {
			told = max(told, v.Generation)
		}
	}
	return told
}

// CarriedGeneration is the generation of the layer that a call of tool,
// with params, brings as it carries a session (its client was told it
// elsewhere, giveHistory), or 0: what serves that client is to carry it on.
func CarriedGeneration(ctx context.Context, tool string, params json.RawMessage) uint64 {
	if tool != historyTool || !Carrying(ctx) {
		return 0
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var told uint64
	if json.Unmarshal(params, &p) == nil {
		_ = json.Unmarshal(p.Meta[generationMeta], &told)
	}
	return told
}
