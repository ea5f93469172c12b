package machine

// configure is the whole machine: one block per state, in the order of the
// diagram in docs/state-machine.md. Every action and guard is a named
// function of actions.go, so the graph shows readable names. An edge's
// rule point is the third argument of permit (second of internal); doing
// gives an edge its action, when its guard.
//
// Two labels deserve a word. lease-won carries R7 because the leaseholder's
// entry action starts the server, which is where a non-loopback bind is
// warned about. lease-live carries R8 because an attached client is served
// through the bridge exactly as a local session would be; a failover that
// takes over takes that same lease-won edge, with the client's session
// carried by internal/node.
//
// A headless process (`serve`: no stdio client of its own) takes the edges
// guarded [headless] where one with a client takes those guarded
// [hasClient]: it has nothing to
// attach or to serve alone, so it exits, and exited's entry says why (see
// endingOf). Its client counts as gone from the start, so lease-lost ends
// it with its last session.
func configure(b *builder) {
	b.sm.OnTransitioning(logTransition)
	b.sm.OnUnhandledTrigger(logUnhandled)

	b.state(Electing).
		onActivate(beginElection).
		onEntry(electAgain).
		onExit(endElection).
		permit(LeaseWon, Leaseholder, R7).
		permit(LeaseLive, Attached, R8, when(hasClient)).
		permit(LeaseLive, Exited, NoRule, when(headless)).
		takingOverUnusableLeases().
		internal(LeaseBusy, R1, doing(takeOver), when(busyPastGrace)).
		internal(LeaseBusy, R1, doing(awaitLease), when(busyWithinGrace)).
		internal(LeaseBinding, R1, doing(awaitLease)).
		internal(LeaseOutraced, R1, doing(readTheWinner)).
		internal(LeaseChanged, R1, doing(attemptAgain), when(waiting)).
		ignore(LeaseChanged, when(attempting)).
		internal(PollDue, R1, doing(attemptAgain)).
		permit(ElectionTimedOut, Alone, R1, when(hasClient)).
		permit(ElectionTimedOut, Exited, R1, when(headless)).
		permit(LeaseUnusable, Alone, R2, when(hasClient)).
		permit(LeaseUnusable, Exited, R2, when(headless)).
		permit(ClientLeft, Exited, NoRule).
		permit(Signal, Exited, NoRule).
		ignore(BridgeFailed)

	b.state(Leaseholder).
		onEntry(startServer).
		internal(ServerStarted, NoRule, doing(noteServing)).
		permit(ServerStartFailed, Alone, R2, when(hasClient), doing(releaseLease)).
		permit(ServerStartFailed, Exited, R2, when(headless), doing(releaseLease)).
		internal(SessionsChanged, NoRule, doing(noteSessions)).
		permit(ClientLeft, OwnerLeft, R5).
		permit(LeaseReplaced, LeaseLost, R6).
		permit(Signal, Exited, R4, doing(releaseLease)).
		ignore(LeaseChanged)

	b.state(OwnerLeft).
		substateOf(Leaseholder).
		onEntry(serveUntilDrained).
		permit(SessionsChanged, Exited, R5, when(drained), doing(releaseLease)).
		internal(SessionsChanged, R5, doing(noteSessions), when(stillServing)).
		ignore(ClientLeft)

	b.state(Attached).
		onEntry(attach).
		onExit(detach).
		permit(BridgeFailed, Electing, R3, when(gone)).
		permit(BridgeFailed, Alone, R2, when(fullOrAlone)).
		permit(ClientLeft, Exited, NoRule).
		permit(Signal, Exited, NoRule).
		ignore(LeaseChanged)

	b.state(LeaseLost).
		onEntry(loseLease).
		onEntry(handOverOrDrain).
		permit(SessionsChanged, Exited, R6, when(drained)).
		internal(SessionsChanged, R6, doing(noteSessions), when(stillServing)).
		permit(HandOver, Electing, R6, doing(handOver)).
		permit(ClientLeft, Exited, R6, when(drained)).
		ignore(ClientLeft, when(stillServing)).
		permit(Signal, Exited, R6).
		ignore(LeaseReplaced).
		ignore(LeaseChanged)

	// Alone is a detour: it keeps serving its client and keeps trying to
	// share, attempting as the election does but never holding the client
	// while it tries; a failed attempt waits its turn again.
	b.state(Alone).
		onEntry(serveAlone).
		onEntry(tryLater).
		onExit(stopTrying).
		internal(RetryDue, R2, doing(tryToJoin)).
		internal(LeaseChanged, R2, doing(trySoon), when(waiting)).
		internal(LeaseChanged, R2, doing(noteChange), when(attempting)).
		permit(LeaseWon, Leaseholder, R2).
		permit(LeaseLive, Attached, R2, when(hasRoom)).
		internal(LeaseLive, R2, doing(tryLater), when(serverFull)).
		takingOverUnusableLeases().
		internal(LeaseBusy, R1, doing(takeOver), when(busyPastGrace)).
		internal(LeaseBusy, R1, doing(tryLater), when(busyWithinGrace)).
		internal(LeaseBinding, R2, doing(tryLater)).
		internal(LeaseOutraced, R1, doing(readTheWinner)).
		internal(LeaseUnusable, R2, doing(tryLater)).
		permit(ClientLeft, Exited, NoRule).
		permit(Signal, Exited, NoRule).
		ignore(LeaseReplaced)

	b.state(Exited).
		onEntry(finish)
}

// takingOverUnusableLeases adds the edges of R1 that an attempt's judgement
// of an unusable lease takes, wherever attempts are made (electing, and
// alone trying to share): stale, corrupt, empty, abandoned and superseded
// are taken over, and attempted again.
func (c *stateBlock) takingOverUnusableLeases() *stateBlock {
	for _, t := range []Trigger{LeaseStale, LeaseCorrupt, LeaseEmpty, LeaseAbandoned, LeaseSuperseded} {
		c = c.internal(t, R1, doing(takeOver))
	}
	return c
}
