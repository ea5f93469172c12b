// Package bridge relays a stdio client to the shared server of another
// process, or of this one.
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
// (package carry) — and resends the message once; the client sees only the
// answer. A server that does not say it took the announcement is sent it as a
// majordomus_announce marked _meta["io.majordomus/replay"], which it does not
// count as an execution. When the server is unreachable, refuses with
// lease_lost, loses the session twice in a row, is silent, or lost its lease
// (bridge_move.go), the bridge leaves it for good and reports a [Gone]
// carrying the client's session ([carry.Session]): [Bridge.Relay] returns it
// for the message that met the failure and for every later one, and
// [Bridge.Done] is closed for an idle client. Deciding what serves next is
// not the bridge's: its owner carries the session there, closes the bridge,
// and answers the message with [Gone.Resend], which sends it again only when
// it provably did not run (the connection was refused, 404, lease_lost) or is
// idempotent (any method but tools/call, and tools whose hints say readOnly
// or idempotent); a non-idempotent call whose outcome is unknown is answered
// with -32603 "outcome unknown". Through [Bridge.Handle], a bridge that left
// answers every request -32603 "shared server unavailable: <reason>". A 400
// or 413 from the server is relayed as a JSON-RPC error, and the bridge
// stays. A Gone's cause says more than its words where it can: a [FullServer]
// (503 with Retry-After, or code full: a new session refused, how many it
// has, how long it asks to be left alone) is neither gone nor shutting down;
// a server that answered no probe, or accepted a connection and never
// answered its proof, is a [SilentServer], which says for how long, so that
// the election that follows waits as asked and counts what the bridge already
// waited (docs/design.md#sharing-heals).
//
// # Goroutines
//
// The heartbeat, the GET stream, the presence, a move and the tools asked
// for run in the background: leaving stops them without waiting, and
// [Bridge.Close] waits for them. An initialize is relayed on a goroutine
// of its own, which its caller's end does not cut short (bridge_opening.go);
// Close waits for it a probe timeout at most. One sent again on the
// client's behalf is read to its end a probe timeout past its caller's
// end, and Close waits for that too. Only leaveLater outlives
// Close for longer: it ends a session left on a failed server once that
// answers, for the server's idle timeout at most and never past the
// context [New] was given; and so does a write to a client that does not
// read its stdout, which ends when that client reads or goes.
//
// # Invariants
//
//   - The bridge's own requests (its heartbeat, its re-initialize, the tools
//     it asks for, an announcement replayed) are never answered to the client.
//   - A session the bridge opened is ended when it closes, also one whose
//     initialize its caller stopped waiting for: nobody else knows its id.
package bridge
