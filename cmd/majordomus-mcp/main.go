// Command majordomus-mcp serves a checkout's .ai/ layer over MCP to every
// agent working in it. Every MCP client spawns it over stdio; see README.md.
//
// This package is where the leaf packages meet. machine decides, registry
// reads and writes the lease, transport carries messages, layer and surface
// are what is served; none of them imports another of the first three.
// Here a node (shared.go) implements the machine's ports over them:
// election.go (Election), server.go (Server), attach.go (Bridge) and
// alone.go (Standalone). The process's one stdio loop talks to a router
// (router.go) that hands each message to whatever serves the client now, so
// a bridge can become a local server under the client without it noticing.
//
// Invariants kept here: stdout carries protocol frames only (logs go to
// stderr through zap, every line with pid and state, by a sink that never
// waits for a stderr nobody reads: logsink.go); a layer error keeps
// its exit code (12, 10) whatever the mode; a process ended by SIGTERM,
// SIGINT or SIGHUP dies of that signal after the machine released what it
// held (on Windows: a console control event, then exit status
// STATUS_CONTROL_C_EXIT). Each operating-system fact of this package sits
// in signals_{unix,windows,other}.go.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
