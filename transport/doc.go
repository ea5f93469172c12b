// Package transport carries MCP messages between a client and an MCP server:
// the stdio loop every process owns, the in-process session that serves a
// client locally, and (later) the shared HTTP server and the bridge.
//
// # Model
//
// A process has exactly one stdio loop for its whole life ([ServeStdio]). It
// reads newline-delimited JSON-RPC from stdin, answers what is not a message
// (a malformed line, invalid UTF-8, an empty batch) itself, and hands every
// message to the current [Backend]. Backends can be swapped while the loop runs
// (a bridge that takes over becomes a local server), because the loop, not
// the backend, owns stdin and stdout.
//
// # Invariants
//
//   - stdout carries protocol frames and nothing else: one JSON value per
//     line, written whole under one lock ([FrameWriter]).
//   - Every request gets exactly one answer; notifications get none.
//   - A broken stdout or stdin EOF ends the loop without an error: the
//     client is gone, which is a normal way for a session to end.
//
// The package knows nothing of leases or process states; cmd wires it.
package transport
