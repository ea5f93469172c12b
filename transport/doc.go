// Package transport carries MCP messages between a client and an MCP
// server. It holds no code; its tests run its parts together: stdio (the
// loop every process owns, and the client served in process), bridge (the
// client relayed to a shared server), httpserver (that server, which
// mounts board, the page), carry (the client's session as it is carried
// from one backend to the next) and wire (the words they all speak). The
// sides import wire and carry, not one another: the bridge speaks to the
// server over HTTP, never through its types. Nothing here knows of leases
// or process states; internal/node wires it.
package transport
