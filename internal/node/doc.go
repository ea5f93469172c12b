// Package node runs one process of the checkout's shared-server design: it
// joins the state machine ([machine]) to the lease ([registry]), the MCP
// transports ([transport]) and the served layer ([layer], [surface]).
//
// The model: a node has at most one stdio client. The machine decides what
// serves it — the shared server this node runs as leaseholder, a bridge to
// another node's server, or an in-process session served alone — and the
// node's ports (election, server, attachment, alone) carry that decision
// out. The stdio loop never sees the change: it hands every message to the
// router, which passes it to whatever serves now and holds it while
// nothing does. The router is the one place that swaps or closes a
// backend: a bridge that leaves its server reports a transport.Gone with
// the session to carry, and the router holds the client's messages, tells
// the machine, closes the bridge and answers the message that met the
// failure from what serves next.
//
// The client's in-process session (inprocess.go) is one across the
// changes the machine makes: a leaseholder and a process served alone serve
// the client in it, on this process's surface, so a process that joins from
// alone as the leaseholder keeps it as it is. While the election runs, it
// answers what is the same in every mode — the handshake, the lists, the
// layer's reads — once such a request has waited half the probe timeout,
// so that no lease holds a host's start-up hostage; what needs the board
// waits for the election. Attaching carries it onto the bridge, peer id
// and all, and closes it.
//
// The timings (timings.go) are resolved once per process, from the flags
// over the manifest's server section over the defaults, and checked as a
// whole before anything starts; every package is given its durations from
// there, so the HTTP server's idle timeout is the one the board and the
// bridge count by.
//
// A leaseholder's server keeps the checkout's shared state (state.go): it
// loads what the server before left in the lease directory before it
// admits a session, journals every change while it holds the lease, and
// stops at once when it loses it; what cannot be read is set aside and
// never keeps the client from sharing. A session carried onto it (a
// take-over, a hand-over, alone) is opened claiming its peer id and
// bringing its announcement.
//
// The command line reaches the module through this package alone
// (command.go): it finds the checkout here (FindCheckout), takes its
// flags' defaults and the errors it gives exit codes to from here, and
// prints what Status and Fleet answer. Status judges the lease with the
// observer and the trust check an election uses (lease.go), so that what
// it reports is what a starting process would find.
//
// The leaseholder's server has a board page (board_source.go): the
// surface's own answers and the machine's graph with the process's
// state, which package transport/board serves and the HTTP server mounts
// at /board; the page's stream wakes on the surface's changes.
// [OpenBoard] (`majordomus-mcp board`) asks that server, once it has
// proved it holds the lease's secret, for a one-time link to it, and
// opens the link where a desktop exists (package internal/browser); a
// checkout without a live shared server has no page, and it says why
// ([ErrNoBoard]).
//
// Invariants:
//   - the client's session survives every change of backend: when a bridge
//     fails, its session (initialize, last announcement) is carried and
//     replayed onto whatever serves next, before that backend answers
//     anything;
//   - a client that was served is never left without an answer: if nothing
//     can serve it any more, every request is answered with every reason;
//     a client never served ends the process with the error instead;
//   - the process's state is the machine's: the log's state, what
//     majordomus_server says of the process and the probe's leaseholder
//     flag are read from it, never kept beside it;
//   - the runtime registry is evidence only: no failure to write it stops a
//     server from serving.
package node
