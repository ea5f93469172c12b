// Package surface is the MCP surface of majordomus: the tools, resources and
// instructions through which clients read a checkout's .ai/ layer and see
// each other on the peer board.
//
// # Model
//
// One [Surface] wraps one mcp-go MCPServer. Every session of that server —
// the in-process stdio session and every HTTP session alike — is one peer on
// the [Board], identified as p1, p2, … in the order sessions were opened, and
// never reused. Tool calls are recorded in the [Executions] history. The
// layer is read through a [LayerSource]; when it is rebuilt, [Surface.IndexChanged]
// republishes the resources and notifies the sessions.
//
// # Invariants
//
//   - Every answer about the layer is a pure function of the index it was
//     read from: two servers on the same index answer the same bytes for
//     tools/list, resources/list, resources/read and the read-only tools
//     (the transparency rule, R8). Nothing time- or peer-dependent goes
//     into those answers.
//   - Read-only tools say so in their annotations; majordomus_announce is the
//     one tool that changes state, and only the board's.
//   - Bad arguments get a tool error result that names the argument; a tool
//     never fails the JSON-RPC request for what the caller sent.
//   - Nothing here writes a file.
package surface
