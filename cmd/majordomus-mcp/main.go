// Command majordomus-mcp serves a checkout's .ai/ layer over MCP to every
// agent working in it. Every MCP client spawns it over stdio; see README.md.
//
// This package is the command line around internal/node, which runs a
// process of the checkout's shared server and answers status and fleet:
// here the flags are parsed, the command is picked, what node answers is
// printed, and errors become exit codes (exit.go). Of this module it
// imports only internal/node, internal/demo, internal/release,
// internal/logging (the log) and machine (for graph).
//
// Invariants kept here: stdout carries protocol frames only (logs go to
// stderr, every line with pid and state, by internal/logging, whose
// writes never wait for a stderr nobody reads); a layer error keeps
// its exit code (12, 10) whatever the mode; a process ended by SIGTERM,
// SIGINT or SIGHUP dies of that signal after the machine released what it
// held (on Windows: a console control event, then exit status
// STATUS_CONTROL_C_EXIT). Each operating-system fact of this package sits
// in signals_{unix,windows,other}.go and pages_{linux,other}.go.
//
// The runtime's check every second for a new CPU limit (to update
// GOMAXPROCS) is off: it woke an idle process once a second, and a
// process here lives as long as its client, mostly idle (issue 33's
// idle cost, B11). GOMAXPROCS is still chosen at start, limit included.
//
//go:debug updatemaxprocs=0
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
