package machine

import "context"

// The guards: each names the fact an edge of the configuration waits on,
// read from the machine on its goroutine.

// waiting: the election waits for the lease to change (no attempt in flight).
func waiting(ctx context.Context, _ ...any) bool { return machineOf(ctx).attempt == 0 }

// attempting: an attempt is in flight; its result will be newer than any
// change seen now.
func attempting(ctx context.Context, _ ...any) bool { return machineOf(ctx).attempt != 0 }

// busyPastGrace: the lease has been busy for Config.BusyGrace or longer.
func busyPastGrace(ctx context.Context, _ ...any) bool {
	m := machineOf(ctx)
	return GraceElapsed(m.busySince, m.now, m.cfg.BusyGrace)
}

// busyWithinGrace: the lease has been busy for less than Config.BusyGrace.
func busyWithinGrace(ctx context.Context, args ...any) bool { return !busyPastGrace(ctx, args...) }

// drained: the own client has left and no session remains.
func drained(ctx context.Context, _ ...any) bool {
	m := machineOf(ctx)
	return shouldExit(m.clientLeft, m.sessions)
}

// stillServing: the own client is here, or some session remains.
func stillServing(ctx context.Context, args ...any) bool { return !drained(ctx, args...) }

// headless: the process has no stdio client of its own (Config.Headless).
func headless(ctx context.Context, _ ...any) bool { return machineOf(ctx).cfg.Headless }

// fullOrAlone: the bridge that failed met a full server, or never took
// the client over from alone: the client is served alone at once.
func fullOrAlone(ctx context.Context, _ ...any) bool {
	f := machineOf(ctx).failed
	return f.Full || f.Alone
}

// gone: the bridge that failed served the client, and its server is gone
// or lost the session.
func gone(ctx context.Context, args ...any) bool { return !fullOrAlone(ctx, args...) }

// hasClient: the process serves a stdio client of its own.
func hasClient(ctx context.Context, args ...any) bool { return !headless(ctx, args...) }
