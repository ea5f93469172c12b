//go:build !windows

package demo

// killedOutright is how the demo says it ends a process outright: Go's
// Kill is SIGKILL on Unix.
const killedOutright = "kill -9"
