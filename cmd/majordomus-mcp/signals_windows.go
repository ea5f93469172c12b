package main

import (
	"errors"
	"io"
	"os"
	"os/signal"

	"golang.org/x/sys/windows"
)

// Windows has no signals but console control events. Go relays Ctrl-C and
// Ctrl-Break as os.Interrupt, and the console's closing, the user's
// logging off and the system's shutting down as one other signal, during
// which Windows waits (a few seconds) for the process to clean up. A
// process ended outright (TerminateProcess) runs nothing: its lease stays,
// stale, and is taken over as after kill -9.

// statusControlCExit is STATUS_CONTROL_C_EXIT, the exit status of a
// console process ended by a control event.
const statusControlCExit = 0xC000013A

// notifyHandled relays every console control event to termination. A
// broken stdout pipe makes the write fail (ERROR_NO_DATA); nothing kills
// the process for it.
func notifyHandled(termination chan<- os.Signal) {
	signal.Notify(termination) // every event Go relays on Windows: the two above
}

// signalName names the console control event behind sig.
func signalName(sig os.Signal) string {
	if sig == os.Interrupt {
		return "CTRL_C_EVENT" // or CTRL_BREAK_EVENT: Go relays both as one
	}
	return "CTRL_CLOSE_EVENT" // or a logoff or shutdown: Go relays all three as one
}

// dieOf ends the process as a control event would have.
func dieOf(os.Signal) { os.Exit(statusControlCExit) }

// unsignalled is w: a write to a closed pipe fails (ERROR_NO_DATA), and
// kills nothing.
func unsignalled(w io.Writer) io.Writer { return w }

// readerLeft reports whether a write failed because nobody reads its pipe
// any more (`demo | more`, quit early).
func readerLeft(err error) bool {
	return errors.Is(err, windows.ERROR_NO_DATA) || errors.Is(err, windows.ERROR_BROKEN_PIPE)
}
