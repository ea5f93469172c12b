// Package leasecheck model-checks the lease protocol
// (docs/design.md#the-lease) over its real code. It has tests only.
//
// What runs is the product's: N processes (3) each run registry's judge
// and Observer, its LeaseFile (acquire, publish, take-over, release) and
// its Journal's state replacement, and react to what they find with the
// machine's pure decisions (machine.TriggerFor, NextBusySince,
// GraceElapsed) and the reactions configure.go gives the triggers in
// Electing (process_test.go: the model of each process step, in one
// place). The file operations go through registry.FS, here a simulated
// lease directory (simfs_test.go) under a simulated clock.
//
// The search (check_test.go) is breadth first over every interleaving of
// the processes' file operations, with at every step: a kill -9 (its lock
// released, its files kept), a SIGTERM (the lease released, then exit), a
// SIGSTOP and SIGCONT, the clock passing the next grace or bound, a
// garbage, empty, truncated or foreign lease written by someone else, and
// the directory becoming unusable and usable again. States are hashed
// (world.key, up to a renaming of the processes), so the search is
// exhaustive within its bound: a depth in steps and a budget of each
// fault. The first violation found therefore has a shortest trace, which
// the test prints: each step, each file operation, the judge's verdicts,
// the lease and the processes after it.
//
// The invariants (invariants_test.go), the rule's, are checked in every
// state: (S1) at most one process acting as the leaseholder is not fenced;
// (S2) no process removes or replaces a lease naming another owner than
// the one it judged; (S3) the shared state is replaced only by the process
// the lease names, and holds no record of a fenced one; (S4) no client is
// served by two backends. From every state, the processes then settle with
// no further fault: (L1) every client is served within the election bound,
// and (L2) then every one is on one board. Each deliberate defect (mutations_test.go, copies
// of a step in test code) is caught, and the product's code is checked
// within the very bounds each is caught in, deeper than TestModelCheck's.
//
// What the model does not cover: a process's steps between two file
// operations are atomic (they touch nothing shared), and taking the lock
// is one step with the operation after it (nothing between them is seen
// by another process); the directory is made unusable by taking its
// permission away, its contents kept (not by a file put in its place);
// the file's identity (dev, ino) is not simulated, so TakeOver compares
// bytes only; a lease written by someone else races the protocol's
// processes without the lock, which no protocol can stop, so S2 and S3
// judge only what the protocol's processes do; the network is a probe
// that answers while the named server serves and is not stopped; a record
// is appended by the Journal's descriptor, whole. What the real file
// system may do that the model does not: fail a read, rename or link for
// a moment (Windows), lose a link on a file system without hard links
// (createComplete's fallback writes in place under the lock), reorder
// what is not synced before a power loss, and let time pass while a
// process holds the lock (the lock's wait is a step that gives up).
package leasecheck
