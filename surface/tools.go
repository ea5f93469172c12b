package surface

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// readOnly marks a tool that changes nothing, so hosts may call it freely.
func readOnly(title string) mcp.ToolOption { return hints(title, true) }

// hints says what a tool does to the world: never anything destructive,
// the same call twice the same as once, and nothing outside the server.
func hints(title string, readsOnly bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    new(readsOnly),
		DestructiveHint: new(false),
		IdempotentHint:  new(true),
		OpenWorldHint:   new(false),
	})
}

func (s *Surface) addTools() {
	s.MCP.AddTools(
		server.ServerTool{Tool: mcp.NewTool("majordomus_list",
			mcp.WithDescription("List the objects of the checkout's .ai/ layer (rules, ADRs, prompts…): uri, kind, id, version, title."),
			mcp.WithString("kind", mcp.Description("Only objects of this kind, e.g. rule, adr, prompt.")),
			mcp.WithString("tag", mcp.Description("Only objects carrying this tag.")),
			readOnly("List layer objects")), Handler: s.toolList},
		server.ServerTool{Tool: mcp.NewTool("majordomus_get",
			mcp.WithDescription("Read one layer object: its front matter and its body."),
			mcp.WithString("uri", mcp.Required(), mcp.Description("The object's URI, e.g. majordomus://rule/project.alpha@1.")),
			readOnly("Read a layer object")), Handler: s.toolGet},
		server.ServerTool{Tool: mcp.NewTool("majordomus_search",
			mcp.WithDescription("Search the layer's objects; the best matches first."),
			mcp.WithString("query", mcp.Required(), mcp.Description("Words to look for in ids, titles, tags, descriptions and bodies.")),
			mcp.WithString("kind", mcp.Description("Only objects of this kind.")),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(100), mcp.Description("At most this many hits (1–100, default 10).")),
			readOnly("Search the layer")), Handler: s.toolSearch},
		server.ServerTool{Tool: mcp.NewTool("majordomus_repository",
			mcp.WithDescription("The checkout: its name, repository_id, kinds and counts, diagnostics, state (ok or degraded) and the index generation."),
			readOnly("Describe the checkout")), Handler: noArguments(func(context.Context, mcp.CallToolRequest) any {
			return repositoryReport(s.cfg.Layer.Current())
		})},
		server.ServerTool{Tool: mcp.NewTool("majordomus_peers",
			mcp.WithDescription("The peer board: every agent session on this server, who it is, when it was last seen and what it announced; also the last few peers that left after announcing (attached: false), which count counts apart, as departed."),
			readOnly("Show the peer board")), Handler: noArguments(func(ctx context.Context, req mcp.CallToolRequest) any {
			return s.peersView(s.callerOf(ctx, req.Params.Meta))
		})},
		server.ServerTool{Tool: mcp.NewTool(announceTool,
			mcp.WithDescription("Tell the other peers what you are working on. Answers your record and the peers whose scopes overlap yours. A new announcement replaces your previous one."),
			mcp.WithString("intent", mcp.Required(), mcp.Description("What you are about to do, in a sentence.")),
			mcp.WithArray("scope", mcp.WithStringItems(), mcp.Description("The paths you will touch, relative to the checkout root; a glob claims the directory its first wildcard is in (lib/*.go: lib).")),
			hints("Announce your work", false)), Handler: s.toolAnnounce},
		server.ServerTool{Tool: mcp.NewTool("majordomus_executions",
			mcp.WithDescription("The recent tool calls this server answered: tool, peer, when, how long, whether it succeeded. The most recently recorded first."),
			mcp.WithInteger("limit", mcp.Min(1), mcp.Max(MaxExecutionsLimit), mcp.Description("At most this many (1–1000, default 50).")),
			readOnly("Show recent tool calls")), Handler: s.toolExecutions},
		server.ServerTool{Tool: mcp.NewTool("majordomus_server",
			mcp.WithDescription("The process serving this session: pid, role, URL, whether it holds the checkout's lease, sessions, uptime, lease path, profile, version, the layer's state and generation, the protocol revisions it serves, findings and how many log lines its stderr dropped."),
			readOnly("Describe this server")), Handler: noArguments(func(context.Context, mcp.CallToolRequest) any {
			return s.Report()
		})},
		s.fleetTool(),
	)
}

// answer makes a tool result of v: structured content plus the same JSON as
// text for clients that read only text.
func answer(v any) (*mcp.CallToolResult, error) {
	b, err := textJSON(v)
	if err != nil {
		return nil, err
	}
	return mcp.NewToolResultStructured(v, string(b)), nil
}

// textJSON is v as JSON text for a model or a person to read: the <, > and
// & of what the layer's Markdown holds stay as written, not \u003c: the
// text is JSON in a JSON string, so an escape would survive its decoding.
func textJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// refuse answers a bad argument ([args]) with a tool error result.
func refuse(err error) (*mcp.CallToolResult, error) { return mcp.NewToolResultError(err.Error()), nil }

// noArguments is the handler of a tool that takes no argument and answers
// view.
func noArguments(view func(ctx context.Context, req mcp.CallToolRequest) any) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := argsOf(req).only(); err != nil {
			return refuse(err)
		}
		return answer(view(ctx, req))
	}
}

func (s *Surface) toolList(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := argsOf(req)
	kind, tag := a.str("kind"), a.str("tag")
	if err := a.only("kind", "tag"); err != nil {
		return refuse(err)
	}
	objects := s.cfg.Layer.Current().List(kind, tag)
	out := struct {
		Count   int             `json:"count"`
		Objects []objectSummary `json:"objects"`
	}{Count: len(objects), Objects: make([]objectSummary, 0, len(objects))}
	for _, o := range objects {
		out.Objects = append(out.Objects, summarize(o))
	}
	return answer(out)
}

func (s *Surface) toolGet(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := argsOf(req)
	uri := a.required("uri")
	if err := a.only("uri"); err != nil {
		return refuse(err)
	}
	o, ok := s.cfg.Layer.Current().Lookup(uri)
	if !ok {
		return mcp.NewToolResultErrorf("argument 'uri': no object %s in this checkout's layer (majordomus_list shows them)", uri), nil
	}
	return answer(objectView(o))
}

func (s *Surface) toolSearch(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := argsOf(req)
	query, kind, limit := a.required("query"), a.str("kind"), a.integer("limit", 10, 1, 100)
	if err := a.only("query", "kind", "limit"); err != nil {
		return refuse(err)
	}
	hits := s.cfg.Layer.Current().Search(query, kind, limit)
	out := struct {
		Query string      `json:"query"`
		Count int         `json:"count"`
		Hits  []searchHit `json:"hits"`
	}{Query: query, Count: len(hits), Hits: make([]searchHit, 0, len(hits))}
	for _, h := range hits {
		out.Hits = append(out.Hits, searchHit{objectSummary: summarize(h.Object), Score: h.Score})
	}
	return answer(out)
}

func (s *Surface) toolAnnounce(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	intent, scope, err := announcementArgs(argsOf(req))
	if err != nil {
		return refuse(err)
	}
	var peer Peer
	var overlaps []Overlap
	if m, ok := s.modernOf(ctx, req.Params.Meta); ok {
		m.Replay = s.replayed(ctx, req)
		peer, overlaps = s.Board.AnnounceModern(m, intent, scope)
	} else {
		session := server.ClientSessionFromContext(ctx)
		if session == nil {
			return mcp.NewToolResultError("announce needs an MCP session: call it from a client that initialized one"), nil
		}
		if peer, overlaps, err = s.Board.Announce(session.SessionID(), intent, scope, s.replayed(ctx, req)); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
	}
	if overlaps == nil {
		overlaps = []Overlap{}
	}
	return answer(struct {
		Peer     Peer      `json:"peer"`
		Overlaps []Overlap `json:"overlaps"`
	}{peer, overlaps})
}

// An announcement is bounded: whatever a client sends, it fits one record
// of the shared state (maxStateRecord), whose client fields are bounded
// too, and comparing it with every other scope stays cheap
// (docs/security.md#bounded).
const (
	maxScopePaths        = 100
	maxAnnouncementBytes = 48 << 10 // as JSON
)

// announcementArgs reads majordomus_announce's arguments, within bounds.
func announcementArgs(a *args) (intent string, scope []string, err error) {
	intent, scope = a.required("intent"), a.strings("scope")
	if err := a.only("intent", "scope"); err != nil {
		return "", nil, err
	}
	if len(scope) > maxScopePaths {
		return "", nil, fmt.Errorf("argument 'scope' names %d paths: at most %d", len(scope), maxScopePaths)
	}
	if b, _ := json.Marshal(Announcement{Intent: intent, Scope: scope}); len(b) > maxAnnouncementBytes {
		return "", nil, fmt.Errorf("the announcement is %d bytes as JSON: at most %d", len(b), maxAnnouncementBytes)
	}
	return intent, scope, nil
}

func (s *Surface) toolExecutions(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a := argsOf(req)
	limit := a.integer("limit", DefaultExecutionsLimit, 1, MaxExecutionsLimit)
	if err := a.only("limit"); err != nil {
		return refuse(err)
	}
	return answer(s.executionsView(limit))
}
