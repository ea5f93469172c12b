// Package carry is a client's session as it is carried from one backend to
// the next. A client's session outlives the backend that serves it: a
// bridge's failover, a lease-lost leaseholder's hand-over and a process
// joining from alone all carry it, as a [Session], onto whatever serves
// next. Both sides make one, the bridge from what it relays and the local
// session from what it serves, and [Session.Replay] opens it again there.
//
// # Invariants
//
//   - A replay's requests (ids [ReinitializeID], [AnnounceID] and those of
//     what the client asked to hear and of its history) are never answered
//     to the client.
//   - A session's history is given to one server only: whoever carries it
//     forgets it once a server took it.
package carry
