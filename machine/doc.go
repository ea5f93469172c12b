// Package machine is the per-process state machine of majordomus-mcp: what a
// process started over stdio is (electing, leaseholder, attached, lease-lost,
// alone, exited) and what each fact it learns makes it do. It is pure logic
// plus timers: every side effect goes through a small port ([Election],
// [Server], [Bridge], [Standalone]) that internal/node implements over the
// registry and transport packages, and every fact comes in through an input
// method.
//
// The whole machine is the one function configure (configure.go), built on
// github.com/qmuntal/stateless in FiringQueued mode. [Graph] renders it as
// DOT, Mermaid or JSON from that same configuration.
//
// # States
//
//   - electing: each attempt reads and judges the lease ([Election.Attempt]).
//     won → leaseholder; live → attached; stale, corrupt, empty, abandoned,
//     superseded → take it over ([Election.TakeOver], logged "<class> lease:
//     <reason>; taking it over" once it removed the lease) and attempt again; binding → wait for the
//     lease file to change or for Config.BindingPoll, then attempt again;
//     outraced (another process created the lease between this attempt's
//     read and its create) → attempt again at once, to read the winner's;
//     busy → wait likewise until Config.BusyGrace, then take it over;
//     unusable, or Config.ElectionBound elapsed → alone. The lease is
//     watched ([Election.Watch]) from entering electing to leaving it: its
//     changes come back as lease-changed; the busy grace is measured here,
//     on the machine's clock, from the first busy observation, or from when
//     the bridge that failed found that same server silent (one grace, not
//     two).
//   - leaseholder: runs the shared server ([Server.Start]); a failed start →
//     alone, giving the lease back. Its own client leaving → owner-left; the
//     lease replaced on disk → lease-lost; a signal → exited, giving the
//     lease back first (R4).
//   - owner-left (substate of leaseholder): serves the other sessions until
//     the last one ends, then gives the lease back and exits; it exits at
//     once when none is left as it is entered. A session that sends nothing
//     for the idle timeout is ended by the server itself (transport), so an
//     idle one ends like any other: the count internal/node reports drops.
//   - attached: bridges stdio to another process's server. A failed bridge →
//     electing again, the client's session carried, which ends in
//     leaseholder (taking over), attached (re-attaching) or alone. A full
//     server ([Machine.BridgeFailedWith]), or a bridge that never took the
//     client over from alone → alone at once: no try to share holds the
//     client in an election, and the full server is not attached to again
//     before the time it asked (waits.go).
//   - lease-lost: tells the server it lost the lease ([Server.LoseLease])
//     and hands its own client over at once ([Server.HandOver]), electing
//     again for it (convergence: every client ends on the current server);
//     the server drains its other sessions on its own and ends with the
//     last. A process whose client has left keeps its sessions and exits
//     when none remains. It never touches the lease, not even on a signal
//     (R6).
//   - alone: serves the client as --standalone would ([Standalone.Serve]),
//     having logged at warn "cannot use the shared server: <path>:
//     <reason>; serving this client alone, as --standalone would". Alone is
//     a detour (R2): it watches the lease and tries again — after
//     Config.JoinRetry, the wait doubling after each try that finds no way
//     up to Config.JoinRetryMax, and at once when the lease changes, but
//     never twice within JoinRetry. A try is an election attempt judged as
//     electing judges it: won → leaseholder, live → attached (the session
//     served alone carried by internal/node), an unusable class taken over
//     and attempted again; anything else waits its turn, said at info when
//     the reason is new. The client is served alone all the while, never
//     held. A client that cannot even be served alone (Standalone.Serve
//     failed) does not try.
//   - exited: stops what still runs; [Machine.Run] returns an [Outcome].
//
// A headless process (Config.Headless: `serve`, no stdio client of its own)
// runs the same machine with its client gone from the start. Where a process
// with a client would attach (a live server) it exits in good order, and
// where it would serve alone (unusable, out of time, a failed start) it
// exits with Outcome.Failure: the edges guarded [headless] and [hasClient]
// in the graph. Lease-lost ends it with its last session.
//
// A client leaving or a signal ends every state. Every change of state is
// logged once at info as "transition" with from, to, trigger and rule (the
// rule point, R1–R8, or empty); internal steps (take-overs, waits, session
// counts) are not changes of state and log their own lines. A fact nobody
// expected in a state is logged at warn as "unhandled trigger" and changes
// nothing; the facts a state expects and ignores are ignored explicitly.
//
// # Who causes what
//
//   - The election's attempts, run by the machine: lease-won … lease-unusable.
//   - The machine's timers: election-timed-out (Config.ElectionBound, armed on
//     entering electing), poll-due (Config.BindingPoll, armed while
//     waiting) and retry-due (alone's next try).
//   - The server's start, run by the machine: server-started,
//     server-start-failed.
//   - The election's lease watch, run by the machine while it elects:
//     lease-changed.
//   - internal/node, through the input methods: the leaseholder's lease watch
//     ([Machine.LeaseReplaced]), the server's session hooks
//     ([Machine.SessionsChanged]), stdin and the parent
//     ([Machine.ClientLeft]), signal handling ([Machine.Signal]) and the
//     bridge ([Machine.BridgeFailedWith]). Every
//     input method has a caller there (TestEveryInputMethodIsCalled): the
//     graph shows no edge the binary cannot take.
//
// # Threading
//
// One goroutine, the one running [Machine.Run], owns the machine and is the
// only one that fires triggers; actions and guards run on it. Inputs from any
// goroutine go into an unbounded FIFO that the loop drains in order, so an
// input method never blocks, even when called from inside a port the loop is
// waiting on. Work that may block ([Election.Attempt], [Server.Start], the
// lease watch) runs on a goroutine of its own and comes back as an event; a result that no
// longer counts (the election ended or started over) is dropped. A trigger
// an action fires runs right after the current transition, before any other
// input (stateless' FiringQueued run-to-completion). Run returns only after
// every goroutine it started has ended.
//
// # Invariants
//
//   - A client always gets a server (its own, or another process's through
//     the bridge), or is served alone with the reason logged: every path out
//     of electing, leaseholder and lease-lost that does not exit leads to one
//     of them, and the election cannot run forever.
//   - lease-lost is irreversible: no edge leaves it but to exited, or to
//     electing with its own client handed over; its server never serves
//     under the lease again, and the election is the client's.
//   - alone is never a destination: every state a client is served alone
//     in keeps trying to share, unless the client cannot be served at all.
//   - Only a leaseholder releases the lease: [Election.Release] is an action
//     of the edges leaving leaseholder and owner-left, and of nothing else,
//     and it runs after [Server.Stop] has answered the calls under way.
//
// # Clock
//
// The machine measures only durations on its own monotonic clock
// (time.Now, time.NewTimer): how long the election has run, how long a lease
// has been busy since this process first saw it busy, how long a full
// server asked to be left alone. What a bridge reports (how long its
// server had been silent, what Retry-After asked) is a duration too, made
// an instant of the machine's clock as it arrives. It never compares a
// time written by another process with its own; judging a lease's age from
// the file is the Election's business, on the same host. Tests run the
// machine in testing/synctest bubbles, where that clock is fake and
// deterministic.
package machine
