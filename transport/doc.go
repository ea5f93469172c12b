// Package transport carries MCP messages between a client and an MCP
// server. It holds no code, and its tests run its parts together:
// [transport/stdio] (the loop every process owns, and the client served in
// process), [transport/bridge] (the client relayed to a shared server),
// [transport/httpserver] (that server), [transport/carry] (the client's
// session as it is carried from one backend to the next) and
// [transport/wire] (the words they all speak); [transport/board] is the
// page the server mounts. The sides import wire and
// carry, and not one another: the bridge speaks to the server over HTTP,
// never through its types. Nothing here knows of leases or process states;
// internal/node wires it.
package transport
