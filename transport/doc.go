// Package transport carries MCP messages between a client and an MCP server:
// the stdio loop every process owns, the in-process session that serves a
// client locally, the shared HTTP server, and the bridge that relays a stdio
// client to it.
//
// # Model
//
// A process has exactly one stdio loop for its whole life ([Stdio]). It
// reads newline-delimited JSON-RPC from stdin, answers what is not a message
// (a malformed line, invalid UTF-8, an empty batch) itself, and hands every
// message to the current [Backend]. Backends can be swapped while the loop runs
// (a bridge that takes over becomes a local server), because the loop, not
// the backend, owns stdin and stdout. The goroutine that reads a message
// answers it; reading passes to a new goroutine when an answer takes longer
// than a millisecond, so messages are answered concurrently and a slow
// answer holds the next message back by that much at most.
//
// The backends are [Local] (the client served in process by the MCPServer)
// and [Bridge] (the client relayed to the shared server of another process,
// or of this one).
//
// # The shared HTTP server
//
// [HTTPServer] serves GET / (the [Identity], which is the probe), /mcp
// (mcp-go's streamable HTTP transport) and, when given a board page
// ([HTTPConfig].Board, package transport/board), hands it /board once the
// Host and Origin are checked as for /mcp, ending its requests at
// Shutdown. It serves one local user: every
// /mcp request must carry the token of the lease's secret (package
// internal/secret; [HTTPConfig].Secret), and GET / tells whoever does not
// only the server's name and, to a challenge, the proof of its leaseholder
// claim. What anyone who can reach the port sends is bounded before the
// token is asked: connections, a head, a body that is never waited for.
// A [Bridge] asks that proof on every new connection before it writes to
// it, so a process that took a dead server's port is sent nothing.
//
// Every /mcp request is decided by the server before mcp-go sees it, and
// every refusal is a JSON body {"error":{"code":"…","message":"…"}}
// (httpError); mcp-go's own plain-text refusals are rewritten into that
// shape:
//
//   - a request without the token: 401 unauthorized;
//   - a Host that does not name a loopback host on a loopback connection,
//     or an Origin that is not the server's: 403 forbidden;
//   - a body over MaxBody: 413 too_large (the rest of the body is read
//     first, so the client gets the answer rather than a reset);
//   - a body that is not JSON: 400 invalid_json;
//   - a message without Mcp-Session-Id that is not initialize: 400
//     session_required; an unknown or ended session: 404 session_not_found;
//   - a method other than GET, POST, DELETE: 405 method_not_allowed.
//
// While [HTTPConfig].Refusal says so, a new initialize is answered (HTTP 200)
// with the JSON-RPC error -32001 naming lease_lost, the reason and the
// current server's URL, and no session is created; existing sessions go on
// being served. Batches, which mcp-go does not take, are split and answered
// as an array. initialize cannot be batched.
//
// A request of revision 2026-07-28 belongs to no session: it is passed to
// mcp-go, which serves it on a session of the request's own; a lease-lost
// server refuses it with -32040 (that revision's range), and an open
// subscriptions/listen stream counts as a session. A bridge relays such a
// request with the revision's headers and the client's peer id in _meta,
// and its answer, whatever its HTTP status, as it came.
//
// What mcp-go v1.2.1 answers leniently is answered before it sees it, by
// the HTTP server and by [Local] alike (screen.go), so that every mode
// gives the same bytes: a request whose id is null gets -32600 with id
// null; params that are not an object, and an initialize without params,
// get -32602. A batch holding a 2026-07-28 message or an initialize gets
// -32600 for each of its requests (that revision has no batches; an
// initialize comes alone). A session that has not
// initialized answers ping {} (the lifecycle allows it before initialize)
// and any other legacy request -32600 saying initialize comes first; a
// bridge with no session answers them the same way itself, so that no
// such answer names the server's URL or an HTTP status.
//
// A 2026-07-28 client served by [Local] hears a broadcast list_changed
// only while a subscriptions/listen whose filter names it is open (that
// revision's notifications are opt-in), tagged with the listen's id as
// mcp-go tags a listen stream over HTTP, and a request of that revision it
// cancels is answered nothing: as over HTTP, where each such request has
// a session of its own and the bridge closes a cancelled one's stream. A
// listen lasts as long as stdin, whatever serves it: stdin's end is that
// client's shutdown, and the stdio loop ends the listen then.
//
// A prompts/get that leaves out an argument its prompt declares required,
// or leaves it blank, is answered -32602 naming it, by the HTTP server and
// by [Local] alike, before mcp-go sees it: mcp-go v1.2.1 checks no prompt
// argument and answers every error of a prompt handler -32603.
//
// Sessions are counted by the server's own SessionIdManager, which mcp-go
// consults for every new id, every id it is given and every end: DELETE,
// the idle sweeper ([HTTPConfig].IdleTimeout; mcp-go's sweeper terminates
// through the manager), Shutdown, and a dropped GET stream. A session's GET
// stream ending because its client's connection dropped (a bridge killed
// with -9) ends the session at once, the way a DELETE does, so its peer
// leaves the board; a bridge that comes back gets 404 and re-initialises.
// Each opening and each end is logged ("http session opened", "http session
// closed" with its reason) and reported through [HTTPConfig].OnSessions.
//
// # The bridge
//
// [Bridge] relays each message as its own POST to /mcp with the session id
// and the protocol version its initialize negotiated; JSON and event-stream
// answers are both read, and what comes before the answer (notifications,
// server-to-client requests) is written to the client at once. Once the
// client is initialized, the bridge keeps the session's GET stream open and
// relays what arrives on it; the client's answers to server requests are
// POSTed like any message. A heartbeat ping keeps the session alive.
//
// When the server forgets the session (404: it restarted, or expired the
// session), the bridge opens a new one on the client's behalf, replaying its
// initialize — claiming its peer id and bringing its last announcement
// (peer.go) — and resends the message once; the client sees only the
// answer. A server that does not say it took the announcement is sent it
// as a majordomus_announce marked _meta[replayMeta], which it does not
// count as an execution. When the server is unreachable, refuses with
// lease_lost, loses the session twice in a row, is silent, or lost its
// lease (bridge_move.go), the bridge leaves it for good and reports a
// [Gone] carrying the client's session ([Carried]): [Bridge.Relay]
// returns it for the message that met the failure and for every later
// one, and [Bridge.Done] is closed for an idle client. Deciding what serves
// next is not the bridge's: its owner carries the session there, closes
// the bridge, and answers the message with [Gone.Resend], which sends it
// again only when it provably did not run (the connection was refused,
// 404, lease_lost) or is idempotent (any method but tools/call, and tools
// whose hints say readOnly or idempotent); a non-idempotent call whose
// outcome is unknown is answered with -32603 "outcome unknown". Through
// [Bridge.Handle], a bridge that left answers every request -32603
// "shared server unavailable: <reason>". A 400 or 413 from the server is
// relayed as a JSON-RPC error, and the bridge stays.
// A Gone's cause says more than its words where it can: a [FullServer]
// (503 with Retry-After, or code full: a new session refused, how many it
// has, how long it asks to be left alone) is neither gone nor shutting
// down; a server that answered no probe, or accepted a connection and
// never answered its proof, is silent, and [SilentFor] says for how long,
// so that the election that follows waits as asked and counts what the
// bridge already waited (docs/design.md#sharing-heals).
//
// The bridge keeps its own HTTP/1.1 connections for the POSTs, each written
// and read by the goroutine that relays the message (no hand-off to
// net/http's connection goroutines). Messages that may be resent (the same
// rule) go on kept connections, and once more on a new connection when a
// kept one ends before any byte of an answer. A message that must not run
// twice is POSTed on a new connection: a kept one may have been closed by a
// server that stopped, whether the server read what was written to it
// cannot be known, and a refused dial proves that the message did not run.
//
// # Files, by side
//
//   - the stdio side: stdio_loop.go (the loop and [Backend]), stdio_local.go
//     (the in-process session), stdio_listen.go (what its 2026-07-28
//     client hears, its cancelled requests), stdio_carry.go (what of its session a
//     hand-over carries);
//   - the server side: server_http.go (the server, the probe and its
//     proof, the Origin check), server_listen.go (binding, the Host check,
//     the connection cap), server_mcp.go (the /mcp requests),
//     server_modern.go (2026-07-28 requests, a lease-lost refusal),
//     server_sessions.go (the session table and its counts),
//     server_errors.go (the JSON refusals);
//   - the bridge side: bridge.go (the bridge and its session),
//     bridge_calls.go (what it reads of each message), bridge_gone.go
//     (leaving for good: Gone, and resending), bridge_wire.go (one
//     message's POST and answer), bridge_opening.go (before the session
//     opens, and an initialize sent again), bridge_modern.go (2026-07-28 messages),
//     bridge_prove.go (the proof every new connection asks),
//     bridge_stream.go (the heartbeat, the GET stream, reading the server's
//     errors), bridge_poster.go (the kept connections), bridge_watch.go (a
//     stopped server), bridge_tools.go (asking the server for its tools),
//     bridge_move.go (leaving a server that lost its lease),
//     bridge_causes.go (what a Gone says of its server: full, silent),
//     bridge_presence.go (a 2026-07-28 client's presence, and what its end
//     says);
//   - shared by all: frames.go (framing, envelopes, error frames, the
//     requests a carried session is replayed with), screen.go (what is
//     answered before mcp-go sees it, the same in every mode), sse.go (event
//     streams, written by the server and read by the bridge), carried.go
//     (a client's session as it is carried, and its replay), listening.go
//     (what a client asked to hear: subscriptions, its logging level),
//     peer.go (a carried session's peer id and announcement), tools.go
//     (which tools may be resent), prompts.go (a prompt's required
//     arguments) and wire.go (the refusals, codes and headers the server
//     writes and the bridge reads).
//
// A side uses another only through exported names and the shared files:
// the bridge speaks to the server over HTTP, never through its types.
//
// # Invariants
//
//   - stdout carries protocol frames and nothing else: one JSON value per
//     line, written whole under one lock ([FrameWriter]).
//   - Every request gets exactly one answer; notifications get none.
//   - A broken stdout or stdin EOF ends the loop without an error: the
//     client is gone, which is a normal way for a session to end.
//   - A bridged session answers byte for byte what a local session on the
//     same MCPServer answers: the bridge relays the server's bytes.
//   - The bridge's own requests (ids reinitializeID, heartbeatID,
//     announceID) are never answered to the client.
//
// # A known limit of mcp-go
//
// A server-to-client notification queued on an HTTP session just as one of
// its POSTs finishes can be taken off the session's queue by that POST's
// forwarder and dropped (mcp-go v1.2.1). Notifications (list_changed,
// resources/updated, log messages) are therefore best effort over HTTP;
// answers are not affected.
//
// The package knows nothing of leases or process states; internal/node wires it.
package transport
