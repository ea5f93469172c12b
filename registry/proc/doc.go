// Package proc says what the operating system says about processes: a
// process's identity (pid, a start token, the boot), whether the owner
// recorded in a lease still runs ([Env.Alive]), whether a pid exists and
// since when ([Env.Presence]), the clock start tokens are read in
// ([BootTicks]), the death of this process's parent ([WatchParent]), and
// this user's listening majordomus-mcp servers ([ObserveListening]): the
// evidence that a server exists, which no registry row can give (Linux:
// /proc only, no command, no signal; macOS: sysctl and lsof; Windows: a
// process snapshot and the TCP table).
//
// Invariants: a recycled pid never passes for the process recorded (the
// start token differs; the boot differs); an exited process not yet reaped
// is gone; anything that cannot be told is unknown, never gone; a listing
// that cannot be complete fails with [ErrListingUnavailable] rather than
// pass for complete. It imports no other project package.
//
// Every operating-system fact sits in a per-OS file behind one portable
// function: process_{linux,darwin,windows,other}.go (start tokens, the
// boot's identity, the clock), listening_*.go (observation), parent_*.go
// ([WatchParent]). What they compute from the system's answers sits in
// untagged files (procfs.go, darwin*.go, win*.go) whose tests run on every
// system.
package proc
