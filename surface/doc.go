// Package surface is the MCP surface of majordomus: the tools, resources,
// prompts and instructions through which clients read a checkout's .ai/
// layer and see each other on the peer board.
//
// # Model
//
// One [Surface] wraps one mcp-go MCPServer. Every session of that server —
// the in-process stdio session and every HTTP session alike — is one peer on
// the [Board], identified as p1, p2, … in the order sessions were opened, and
// never reused. Tool calls are recorded in the [Executions] history. The
// layer is read through a [LayerSource]; when it is rebuilt, [Surface.IndexChanged]
// republishes the resources and prompts and notifies the sessions.
//
// Every object is a resource, titled and described as the object is. Every
// object of kind prompt is also an MCP prompt, named after its id (or
// <id>@<version> when several versions share the id): prompts/list gives
// its declared arguments, prompts/get its body with their values filled in
// (layer.Object.Render), and completion/complete an argument's declared
// suggestions.
//
// # Invariants
//
//   - Every answer about the layer is a pure function of the index it was
//     read from: two servers on the same index answer the same bytes for
//     tools/list, resources/list, resources/read, prompts/list,
//     prompts/get, completion/complete and the read-only tools (the
//     transparency rule, R8). Nothing time- or peer-dependent goes into
//     those answers.
//   - Read-only tools say so in their annotations; majordomus_announce is the
//     one tool that changes state, and only the board's.
//   - Bad arguments get a tool error result that names the argument; a tool
//     never fails the JSON-RPC request for what the caller sent. A prompt
//     is a JSON-RPC request: an unknown prompt, or a required argument
//     left out or blank, is an error naming it (-32602 as the transports
//     answer it; mcp-go itself answers a prompt handler's error -32603).
//   - An argument's value is data: it is copied into the prompt as it is,
//     never read for placeholders or instructions.
//   - prompts/list_changed is sent only when a prompt was added, removed
//     or changed, resources/list_changed on every published index.
//   - A session of a process that serves its client alone because sharing
//     failed ([Process].Alone) is told so, with the reason: in its
//     instructions, by a warning once it is initialized, and in
//     majordomus_server's findings.
//   - Nothing here writes a file.
package surface
