// Package node runs one process of the checkout's shared-server design: it
// joins the state machine ([machine]) to the lease ([registry]), the MCP
// transports ([transport]) and the served layer ([layer], [surface]).
//
// The model: a node has at most one stdio client. The machine decides what
// serves it — the shared server this node runs as leaseholder, a bridge to
// another node's server, or an in-process session served alone — and the
// node's ports (election, server, attachment, alone) carry that decision
// out through the client's session (client.go). The stdio loop never sees
// the change: it hands every message to the session, which passes it,
// through the router, to whatever serves now, and holds it while nothing
// does.
//
// The client's session is its own one owner: only its verbs read or write
// what serves the client, each under its mutex (adopt and handOver hold it
// throughout, replay included). adopt is the one place that makes
// something serve the client: as leaseholder or alone, the in-process
// session, resumed as it is (a process that joins from alone as the
// leaseholder keeps the very session it served alone, on the board that is
// now the checkout's) or opened; attached, a bridge, onto which the
// in-process session is carried before it is closed. It replays what is
// carried, says that the client joined, and notifies. lost hears
// from the session's own Handle, or from a watcher of an idle bridge, that
// the bridge serving the client left its server (a transport.Gone with
// the session to carry): the client's messages wait, the machine elects
// again, the bridge is closed, and the message that met the failure is
// answered from what serves next. While the election runs, early answers
// what is the same in every mode — the handshake, the lists, the layer's
// reads — in the in-process session, once such a request has waited
// 50 ms, so that no lease holds a host's start-up hostage;
// what needs the board waits for the election. The lease's first reading
// (trusted, read, its server proved) begins as the node is built, and the
// machine's first attempt takes it: an attach's wait on another process
// overlaps building this one. When that reading proves a live server, the
// client's first initialize is greeted before the machine hears of it,
// with the bytes that server answers the session the bridge then opens
// there (greeting.go): the greeting is the session carried. The router keeps the read
// path: which backend answers a message, and how many each is answering,
// so that carrying a session lets them finish first; what it gives
// messages to, only the session sets and retires.
//
// A leaseholder that loses its lease hands its client over at once
// (server.go): a server with other sessions left serves them on without
// the machine, whose count it no longer tells, and stops with the last;
// a new term the process wins meanwhile runs its own server beside it, on
// the same surface. The process ends only once every such server has
// stopped, unless a signal ends it.
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
// bringing its announcement, and the calls it answered in process that no
// shared history kept, which the process then forgets.
//
// The command line reaches the module through this package alone
// (command.go): it hands its flags to [Open], which finds the checkout,
// takes their defaults from [DefaultFlags], gives exit codes by
// [FaultOf], and prints what Status and Fleet answer. Status judges the lease with the
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
//   - no file but the session's own (client.go, client_carry.go) touches
//     its state (its greeting's own is greeting.go's), and none but those
//     sets or retires what the router gives messages to (owner_test.go);
//   - a hand-over finds the client seated whole or not at all: adopt and
//     handOver run one after the other, and an adoption whose context has
//     ended (handed over, attachment stopped) seats nothing;
//   - early answers end once anything was chosen, served or carried, and
//     so does a greeting, which carries what it answered;
//   - a client that was served is never left without an answer: if nothing
//     can serve it any more, every request is answered with every reason;
//     a client never served ends the process with the error instead;
//   - the process's state is the machine's: the log's state and what
//     majordomus_server says of the process are read from it, never kept
//     beside it; the probe's leaseholder flag is too, and also says no
//     from the moment the server lost its lease, before the machine hears;
//   - the runtime registry is evidence only: no failure to write it stops a
//     server from serving.
package node
