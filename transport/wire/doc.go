// Package wire holds the words every side of the transport speaks: the
// frames and envelopes of JSON-RPC, the [Backend] a stdio loop hands
// messages to, what is answered before mcp-go sees a message, server-sent
// event streams, and the refusals' codes and headers the HTTP server writes
// and the bridge reads. It knows no side.
//
// What mcp-go v1.2.1 answers leniently is answered before it sees it, by
// the HTTP server and by the local session alike ([Screen]), so that every mode
// gives the same bytes: a request whose id is null gets -32600 with id
// null; params that are not an object, and an initialize without params,
// get -32602. A batch holding a 2026-07-28 message or an initialize gets
// -32600 for each of its requests (that revision has no batches; an
// initialize comes alone). A session that has not
// initialized answers ping {} (the lifecycle allows it before initialize)
// and any other legacy request -32600 saying initialize comes first; a
// bridge with no session answers them the same way itself, so that no
// such answer names the server's URL or an HTTP status.
//
// A prompts/get that leaves out an argument its prompt declares required,
// or leaves it blank, is answered -32602 naming it, by the HTTP server and
// by the local session alike ([PromptRefusal]), before mcp-go sees it: mcp-go v1.2.1 checks no prompt
// argument and answers every error of a prompt handler -32603. A
// completion/complete of a prompt the server does not have, or naming no
// reference or argument, is answered -32602 the same way (mcp-go answers
// an empty completion, or -32600).
//
// # Invariants
//
//   - stdout carries protocol frames and nothing else: one JSON value per
//     line, written whole under one lock ([FrameWriter]).
package wire
