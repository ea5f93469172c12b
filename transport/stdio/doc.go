// Package stdio is the stdio side of the transport: the loop every process
// owns, and the session that serves its client in process.
//
// A process has exactly one stdio loop for its whole life ([Loop]). It
// reads newline-delimited JSON-RPC from stdin, answers what is not a message
// (a malformed line, invalid UTF-8, an empty batch) itself, and hands every
// message to the current [wire.Backend]. Backends can be swapped while the loop runs
// (a bridge that takes over becomes a local server), because the loop, not
// the backend, owns stdin and stdout. The goroutine that reads a message
// answers it; reading passes to a new goroutine when an answer takes longer
// than a millisecond (readHandOff), so that most messages pass between no
// goroutines, messages are answered concurrently, and a slow answer holds
// the next message back by that much at most. An initialize holds the next
// message back until it is answered: a client may send its first requests
// without waiting, and they are served in the session it opens.
//
// A 2026-07-28 client served by [Local] hears a broadcast list_changed
// only while a subscriptions/listen whose filter names it is open (that
// revision's notifications are opt-in), once through each such listen,
// tagged with its id as mcp-go tags a listen stream over HTTP (where each
// listen is a session of its own), and a request of that revision it
// cancels is answered nothing: as over HTTP, where each such request has
// a session of its own and the bridge closes a cancelled one's stream. A
// listen lasts as long as stdin, whatever serves it: stdin's end is that
// client's shutdown, and the stdio loop ends the listen then.
// In process, its one session would otherwise hear every broadcast
// (mcp-go takes a session with no filter for a legacy one). A client that
// initialized too hears every broadcast as a session does, and through
// each listen what it asks for besides: bridged, its session and each
// listen are a session each.
//
// # Invariants
//
//   - A broken stdout or stdin EOF ends the loop without an error: the
//     client is gone, which is a normal way for a session to end.
//   - A bridged session answers byte for byte what a local one answers.
//   - stdout carries protocol frames and nothing else ([wire.FrameWriter]).
package stdio
