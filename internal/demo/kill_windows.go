package demo

// killedOutright is how the demo says it ends a process outright: Go's
// Kill is TerminateProcess on Windows.
const killedOutright = "TerminateProcess"
