// Package rawio reads and writes pipes and sockets with raw system calls
// where the system allows it (Linux), waiting in Go's poller as usual when
// one would block.
//
// Why: every read and write through os or net enters the runtime's
// system-call state, and the first one after the process was idle wakes
// the runtime's monitor thread, which then polls every 20 µs until the
// process is idle again. A relay that sleeps between messages pays that
// wake-up twice per message: on a 2-core virtual machine, a third of a
// bridge's CPU per call and about 60 µs of its latency (B2). A call that
// cannot wait returns at once, so it needs none of what that state is for
// (handing the processor to another thread while it blocks).
//
// HungUp asks a connection whether its peer closed its end, taking
// nothing from it and never waiting: an HTTP server that answers an
// initialize learns so that nobody will read the answer, before
// net/http's own reader, which a busy server runs later, would tell it.
// It can tell on unix systems (a peek) and Windows (WSAPoll, and
// FIONREAD for what is left unread); elsewhere it says no. Refused tells
// a dial that nothing listened at, whose error each system spells its own.
//
// Invariant: no raw read or write ever waits. A descriptor is read or
// written raw only when Go's poller watches it and it is non-blocking, or
// is a socket asked not to wait (MSG_DONTWAIT); anything else is returned
// as it is. Lstat is the one raw call that may wait: for a file whose
// inode the kernel has cached (the lease, checked before every message)
// it does not, but on a filesystem that must ask a disk or a server it
// holds its thread, and the runtime's processor with it, until answered.
package rawio
