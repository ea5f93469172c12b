// Package scenarios holds the multi-process tests of the built binary: each
// scenario starts majordomus-mcp as real processes with real pipes, sockets,
// files and signals, and checks what they log, what the lease file holds
// and what their clients are answered. scenarios/README.md lists every
// scenario with the rule point (docs/design.md#the-rule) it proves.
//
// The binary is built once by TestMain. Scenarios wait for events — a log
// line, a frame, an exit — each with a generous cap, and never sleep, so
// that they pass on a loaded 2-core machine. They observe the product only
// from outside: through its stdio, its logs, its HTTP surface and its files.
package scenarios
