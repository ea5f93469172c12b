// Package httpserver is the shared HTTP server.
//
// [Server] serves GET / (the [Identity], which is the probe), /mcp
// (mcp-go's streamable HTTP transport) and, when given a board page
// ([Config].Board, package transport/board), hands it /board once the
// Host and Origin are checked as for /mcp, ending its requests at
// Shutdown. It serves one local user: every
// /mcp request must carry the token of the lease's secret (package
// internal/secret; [Config].Secret), and GET / tells whoever does not
// only the server's name and, to a challenge, the proof of its leaseholder
// claim. What anyone who can reach the port sends is bounded before the
// token is asked: connections (a connection no request of which proved
// the secret gives its place up to a newcomer), a head, a body that is
// never waited for.
// A bridge asks that proof on every new connection before it writes to
// it, so a process that took a dead server's port is sent nothing.
//
// Every /mcp request is decided by the server before mcp-go sees it, and
// every refusal is a JSON body {"error":{"code":"…","message":"…"}}
// ([wire.HTTPError]); mcp-go's own plain-text refusals are rewritten into that
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
//   - a method other than GET, POST, DELETE: 405 method_not_allowed;
//   - any request once Shutdown began: 503 unavailable (it did not run).
//     Shutdown closes no session before its requests under way are answered;
//     GET / says leaseholder false from its start.
//
// While [Config].Refusal says so, a new initialize is answered (HTTP 200)
// with the JSON-RPC error -32001 naming lease_lost, the reason and the
// current server's URL, and no session is created; existing sessions go on
// being served. [Server.EndStreams], which a server that lost its lease
// calls, ends their GET streams (and bridges' presences) once, so that
// idle bridges move at once; a client may open its stream again. Batches,
// which mcp-go does not take, are split and answered as an array.
// initialize cannot be batched. The ping of a session whose GET stream is
// open (a bridge's heartbeat) is answered here, as mcp-go would, and told
// to [Config].Heard: it costs an idle server no goroutine.
//
// A request of revision 2026-07-28 belongs to no session: it is passed to
// mcp-go, which serves it on a session of the request's own; a lease-lost
// server refuses it with -32040 (that revision's range), but for a bridge's
// presence ([Config].PresenceID), and an open subscriptions/listen stream
// counts as a session. Its notifications/cancelled is answered 202 and goes
// no further: on no session it cannot say whose call it names (mcp-go
// would cancel any sessionless call of that id), and that revision
// cancels over HTTP by closing the request's stream. A bridge relays such
// a request with the revision's headers and the client's peer id in _meta,
// and its answer, whatever its HTTP status, as it came.
//
// Sessions are counted by the server's own SessionIdManager, which mcp-go
// consults for every new id, every id it is given and every end: DELETE,
// the idle sweeper ([Config].IdleTimeout; mcp-go's sweeper terminates
// through the manager), Shutdown, and a dropped GET stream. A session's GET
// stream ending because its client's connection dropped (a bridge killed
// with -9) ends the session at once, the way a DELETE does, so its peer
// leaves the board; a bridge that comes back gets 404 and re-initialises.
// Neither ends a session under a request of its being answered: it ends
// once they have ended (a DELETE is answered 202 at once, and the session
// is told Leaving).
// Each opening and each end is logged ("http session opened", "http session
// closed" with its reason) and reported through [Config].OnSessions. An
// initialize whose client hung up before its answer opens no session
// (nobody would know its id, and it would hold a place on the board until
// the idle timeout): the request's context says so once net/http's reader
// ran, and the connection itself is asked once the answer is made
// ([rawio.HungUp]), since a busy server runs that reader later.
//
// # A known limit of mcp-go
//
// A server-to-client notification queued on an HTTP session just as one of
// its POSTs finishes can be taken off the session's queue by that POST's
// forwarder and dropped (mcp-go v1.2.1). Notifications (list_changed,
// resources/updated, log messages) are therefore best effort over HTTP;
// answers are not affected.
package httpserver
