// Package surface is the MCP surface of majordomus: the tools, resources,
// prompts and instructions through which clients read a checkout's .ai/
// layer and see each other on the peer board.
//
// # Model
//
// One [Surface] wraps one mcp-go MCPServer. Every session of that server —
// the in-process stdio session and every HTTP session alike — is one peer on
// the [Board], identified as p1, p2, … in the order sessions were opened, and
// never reused. A client of the 2026-07-28 revision has no session; it is a
// peer all the same (see Modern clients below). Tool calls are recorded in
// the [Executions] history.
//
// The history and the board's announcers are the checkout's, not one
// process's (docs/design.md#nothing-is-lost): while the caller keeps them
// ([Surface.Keep]) each change is given to its sink as a record of the
// shared state (state.go, [StateSchema]), before the call that made it is
// answered, and the state the server before left is merged in, its
// announcers listed as departed until each is back. A session opened again
// after a take-over claims its id and brings its announcement at its
// opening ([Board.Open]): it is on the board with both at once and draws no
// number. A majordomus_announce marked [ReplayMeta] (a bridge's replay) is
// not an execution. The layer is read through a [LayerSource]; when it is
// rebuilt, [Surface.IndexChanged] republishes the resources and prompts and
// notifies the sessions.
//
// Every object is a resource, titled and described as the object is. Every
// object of kind prompt is also an MCP prompt, named after its id (or
// <id>@<version> when several versions share the id): prompts/list gives
// its declared arguments, prompts/get its body with their values filled in
// (layer.Object.Render), and completion/complete an argument's declared
// suggestions.
//
// The read-only tools' answers are also given as JSON to the board page's
// endpoints (answers.go: [Surface.PeersJSON], [Surface.ExecutionsJSON],
// [Surface.ServerJSON], marshalled from the same views, so that both say
// the same bytes), with [Surface.OverlapsJSON], the overlapping pairs of
// announcers by the rule majordomus_announce answers with (all counted,
// the first hundred listed, ten paths a side). Every change of
// the board, the history or the layer moves a generation and closes the
// channel [Surface.Changes] handed out before it (changes.go), which the
// page's event stream waits on.
//
// # Modern clients
//
// A 2026-07-28 ("modern") request — one whose _meta names a modern
// protocol version that mcp-go serves, with client capabilities — is
// sighted on the board before it is served ([Board.Sight]): its peer is
// found or created, named by its _meta clientInfo (when it sends one; a
// request that sends none keeps the name) and marked seen on the board's
// clock. Its peer is, in this order:
//
//  1. the peer of the session it came on, when that session is on the
//     board: the stdio client served in process; or of the session its
//     bridge names ([Config].Session: a stdio client that opened a
//     session too, speaking both revisions). A claim it sends is
//     ignored; the session is its identity.
//  2. the peer it claims: in its context ([Config].PeerClaim: a bridge
//     relaying a stdio client sends that client's id in a header with
//     every request), else in its _meta[PeerMeta]. A claim counts only as a
//     string of the board's form (p<n>, n from 1, six digits at most); and
//     it is refused when an attached session's peer holds the id — a claim
//     never merges into a session. A claim of a sessionless peer's id is
//     that peer; of a free id, a new peer under it (later ids are numbered
//     past it); of a departed session peer's id, that peer back with its
//     announcement, as a session's claim is ([Board.reclaim] for both).
//  3. else (no claim, or one ignored or refused) the peer of the identity it
//     sends: one peer per clientInfo name and version (one for all that
//     send none, named "(unnamed)"), numbered as a new session would be.
//
// A peer found by 2 or 3 has no session, so it leaves the board when it
// has been unheard for the idle timeout ([Config].IdleTimeout), unless a
// subscriptions/listen stream of it is open ([Board.Listen]). When its
// last stream ends, it leaves at once if nothing else of it was heard
// since that stream opened; otherwise it was alive until then, and the
// idle timeout runs from the stream's end. Expiry is judged lazily, on the
// board's clock, whenever the board is read or changed. A departed peer
// that announced stays listed (attached: false) like a departed session;
// heard from again — the same claim, or the same identity — it is the same
// peer, attached again, its announcement kept, because its departure was
// inferred from silence rather than seen. majordomus_announce,
// majordomus_peers (its caller) and majordomus_executions treat such a
// peer as any other; its transport is "http". A session that opens
// claiming such a peer while it is attached (its client, a dual-era one,
// falling back to initialize) is that peer from then on ([Board.Open]).
//
// # Invariants
//
//   - Every answer about the layer is a pure function of the index it was
//     read from: two servers on the same index answer the same bytes for
//     tools/list, resources/list, resources/read, prompts/list,
//     prompts/get, completion/complete and the read-only tools (the
//     transparency rule, R8). Nothing time- or peer-dependent goes into
//     those answers.
//   - Read-only tools say so in their annotations; majordomus_announce is the
//     one tool that changes state, and only the board's.
//   - Bad arguments get a tool error result that names the argument; a tool
//     never fails the JSON-RPC request for what the caller sent. A prompt
//     is a JSON-RPC request: an unknown prompt, or a required argument
//     left out or blank, is an error naming it (-32602 as the transports
//     answer it; mcp-go itself answers a prompt handler's error -32603).
//   - An argument's value is data: it is copied into the prompt as it is,
//     never read for placeholders or instructions.
//   - prompts/list_changed is sent only when a prompt was added, removed
//     or changed, resources/list_changed on every published index.
//   - A session of a process that serves its client alone because sharing
//     failed ([Process].Alone) is told so, with the reason: in its
//     instructions, by a warning once it is initialized, and in
//     majordomus_server's findings.
//   - A client's own text (name, version, title) is kept bounded (256
//     characters each) and reaches prose only through quoted; a claimed
//     peer id is used only when it has the board's form.
//   - A peer id names one listed peer at a time, and a new id is numbered
//     past every id given or granted, so it never names a peer that was.
//   - Nothing here writes a file: the shared state is given to the
//     caller's sink.
package surface
