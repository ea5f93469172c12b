// Package rawio reads and writes non-blocking descriptors (sockets, and
// pipes opened non-blocking) with raw system calls where the system allows
// it (Linux), waiting in Go's poller as usual when one would block.
//
// Why: every read and write through os or net enters the runtime's
// system-call state, and the first one after the process was idle wakes
// the runtime's monitor thread, which then polls every 20 µs until the
// process is idle again. A relay that sleeps between messages pays that
// wake-up twice per message: on a 2-core virtual machine, a third of a
// bridge's CPU per call and about 60 µs of its latency (B2).
// A non-blocking call returns at once, so it needs none of what that state
// is for (handing the processor to another thread while it blocks).
//
// Invariant: only a descriptor in non-blocking mode that Go's poller
// watches is ever wrapped; anything else is returned as it is, so that no
// raw call can block a thread that holds a processor.
package rawio
