// Package together runs the transport's parts together; it holds no code.
// The transport carries MCP messages between a client and an MCP server,
// in six packages under transport/: stdio (the loop every process owns,
// and the client served in process), bridge (the client relayed to a
// shared server), httpserver (that server, which mounts board, the page),
// carry (the client's session as it is carried from one backend to the
// next) and wire (the words they all speak). The sides import wire and
// carry, not one another: the bridge speaks to the server over HTTP, never
// through its types. Nothing in them knows of leases or process states;
// internal/node wires them.
package together
