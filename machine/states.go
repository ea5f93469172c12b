package machine

// State is one of the machine's states. The names are part of the contract:
// they appear in logs, in [Transition] and in the graph.
type State string

// The states. [OwnerLeft] is a substate of [Leaseholder]: every transition
// configured on Leaseholder applies to it too, unless it overrides one.
const (
	// Electing reads and judges the lease, takes over an unusable one and
	// waits for a binding one, within Config.ElectionBound.
	Electing State = "electing"
	// Leaseholder holds the lease and runs the shared server, which also
	// serves this process's own stdio client.
	Leaseholder State = "leaseholder"
	// OwnerLeft is the leaseholder whose own stdio client has left; it serves
	// until the last session ends.
	OwnerLeft State = "owner-left"
	// Attached bridges this process's stdio to a shared server that another
	// process runs.
	Attached State = "attached"
	// LeaseLost was the leaseholder until another process took the lease
	// over; it takes no new session. Its own client, if here, is handed
	// over at once (the election that follows is the client's, not the
	// server's); without it, it serves the sessions it had and ends with
	// them.
	LeaseLost State = "lease-lost"
	// Alone serves this process's client without sharing, as --standalone
	// would, because sharing failed; the reason was logged.
	Alone State = "alone"
	// Exited is terminal: [Machine.Run] returns once it is entered.
	Exited State = "exited"
)

// Trigger is a fact the machine reacts to. The configuration decides what a
// fact means in each state; a fact that means nothing in a state is ignored
// explicitly, and one nobody expected there is logged at warn.
type Trigger string

// Lease observations: one per [Class], fired when an election attempt
// returns its [Observation].
const (
	// LeaseWon: this process created the lease.
	LeaseWon Trigger = "lease-won"
	// LeaseLive: a live server answers for this checkout; attach to it.
	LeaseLive Trigger = "lease-live"
	// LeaseStale: the server named is gone and so is its owner.
	LeaseStale Trigger = "lease-stale"
	// LeaseCorrupt: not JSON, not an object, or another schema.
	LeaseCorrupt Trigger = "lease-corrupt"
	// LeaseEmpty: empty or whitespace, which no owner writes.
	LeaseEmpty Trigger = "lease-empty"
	// LeaseAbandoned: no URL, and old or ownerless.
	LeaseAbandoned Trigger = "lease-abandoned"
	// LeaseSuperseded: its server runs code that has since been replaced.
	LeaseSuperseded Trigger = "lease-superseded"
	// LeaseBinding: no URL yet, owner alive, younger than the bind grace.
	LeaseBinding Trigger = "lease-binding"
	// LeaseOutraced: another process created the lease first; attempt again
	// at once, to read the winner's.
	LeaseOutraced Trigger = "lease-outraced"
	// LeaseBusy: the URL does not answer but its owner is alive.
	LeaseBusy Trigger = "lease-busy"
	// LeaseUnusable: the lease cannot be created, read or replaced.
	LeaseUnusable Trigger = "lease-unusable"
)

// The other facts.
const (
	// LeaseChanged: the watch saw the lease file change ([Machine.LeaseChanged]).
	LeaseChanged Trigger = "lease-changed"
	// PollDue: Config.BindingPoll elapsed while the election was waiting.
	PollDue Trigger = "poll-due"
	// ElectionTimedOut: Config.ElectionBound elapsed before the election ended.
	ElectionTimedOut Trigger = "election-timed-out"
	// ServerStarted: [Server.Start] returned nil.
	ServerStarted Trigger = "server-started"
	// ServerStartFailed: [Server.Start] returned an error.
	ServerStartFailed Trigger = "server-start-failed"
	// BridgeFailed: the attached server is gone, refused with lease_lost or
	// as full, or lost the session twice ([Machine.BridgeFailedWith]).
	BridgeFailed Trigger = "bridge-failed"
	// LeaseReplaced: the watch saw this process's lease gone, replaced, empty
	// or corrupt ([Machine.LeaseReplaced]).
	LeaseReplaced Trigger = "lease-replaced"
	// SessionsChanged: the count of live sessions other than the own stdio
	// client changed ([Machine.SessionsChanged]).
	SessionsChanged Trigger = "sessions-changed"
	// RetryDue: a process served alone has waited its turn to try to
	// share again (Config.JoinRetry, doubling up to Config.JoinRetryMax).
	RetryDue Trigger = "retry-due"
	// HandOver: a lease-lost server's own client moves to the current
	// server (convergence), while the server drains its other sessions.
	HandOver Trigger = "hand-over"
	// ClientLeft: stdin reached EOF or the parent died ([Machine.ClientLeft]).
	ClientLeft Trigger = "client-left"
	// Signal: SIGTERM, SIGINT or SIGHUP arrived, or on Windows a console
	// control event ([Machine.Signal]).
	Signal Trigger = "signal"
)

// Class is an election attempt's judgement of the lease
// (docs/design.md#judging-a-lease). Each class has its trigger, "lease-"
// followed by the class. The judge's classes (registry.Class) come in as
// they are, the same words; won and outraced only an attempt's own create
// gives.
type Class string

// The classes an [Election] may report.
const (
	ClassWon        Class = "won"
	ClassLive       Class = "live"
	ClassStale      Class = "stale"
	ClassCorrupt    Class = "corrupt"
	ClassEmpty      Class = "empty"
	ClassAbandoned  Class = "abandoned"
	ClassSuperseded Class = "superseded"
	ClassBinding    Class = "binding"
	// ClassOutraced: no lease was there, but another process created one
	// between this attempt's read and its own create.
	ClassOutraced Class = "outraced"
	ClassBusy     Class = "busy"
	ClassUnusable Class = "unusable"
)

// Classes are every class an [Election] may report.
var Classes = []Class{ClassWon, ClassLive, ClassStale, ClassCorrupt, ClassEmpty, ClassAbandoned, ClassSuperseded, ClassBinding, ClassOutraced, ClassBusy, ClassUnusable}

// Rule names a point of the rule (docs/design.md#the-rule) that a
// transition implements.
type Rule string

// The rule points the machine implements. NoRule marks a transition that
// implements none (a client leaving an attached process, say).
const (
	NoRule Rule = ""
	R1     Rule = "R1"
	R2     Rule = "R2"
	R3     Rule = "R3"
	R4     Rule = "R4"
	R5     Rule = "R5"
	R6     Rule = "R6"
	R7     Rule = "R7"
	R8     Rule = "R8"
)

// rulePoints says, in short, what each rule point requires; the JSON graph
// lists them with the edges that carry each.
var rulePoints = []struct {
	ID    Rule
	Point string
}{
	{R1, "the election reads the lease on every attempt and classifies it: live attaches; stale, corrupt, empty, abandoned, superseded are taken over; binding is waited for; bounded by time"},
	{R2, "a lease that cannot be created, joined or replaced, or a server that cannot start: serve alone and log why; so does a full server; alone is a detour: keep trying (a full server as it asks), and join the shared server, the session carried, as soon as it can"},
	{R3, "a bridge whose server is gone elects again: take over with the session carried, re-attach, or serve alone"},
	{R4, "SIGTERM, SIGINT and SIGHUP remove the lease before the process dies of the signal"},
	{R5, "a server whose owner left ends with its last session; an idle HTTP session expires at the idle timeout"},
	{R6, "a server whose lease was taken over says so, keeps its sessions, ends with them, never takes a new client"},
	{R7, "a non-loopback bind is served with a warning naming what it exposes"},
	{R8, "bridged, restarted and local sessions answer byte for byte the same"},
}

// Transition is one change of state, as logged and as passed to
// Config.OnTransition.
type Transition struct {
	From    State
	To      State
	Trigger Trigger
	Rule    Rule
}

// Outcome is how [Machine.Run] ended.
type Outcome struct {
	// Code is the exit status for a process that ends without a signal: 0,
	// since every way into exited is an orderly one.
	Code int
	// Signal names the signal that ended the machine ("SIGTERM"), or is
	// empty. When set, the caller re-raises it after its own cleanup so the
	// exit status says the signal.
	Signal string
	// Reason says in words why the machine ended ("the client left").
	Reason string
	// Failure, for a headless process, says why it could not run the
	// shared server; "" otherwise.
	Failure string
}
