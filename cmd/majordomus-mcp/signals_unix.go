//go:build unix

package main

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// On Unix SIGTERM, SIGINT and SIGHUP end a serving process: it releases
// what it holds, then dies of the signal, so that its exit status says
// which it was. A process started with SIGHUP or SIGINT ignored (nohup; a
// background job of a shell without job control) keeps it ignored, as
// the convention is: handling it would undo what its starter asked.

// notifyHandled relays the termination signals to termination, and keeps
// SIGPIPE from killing the process: Go kills a process that writes to a
// broken stdout pipe unless SIGPIPE is being received; then the write
// fails with EPIPE and the stdio loop ends.
func notifyHandled(termination chan<- os.Signal) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	signal.Notify(termination, handled(signal.Ignored)...)
}

// unsignalled is w, when it is this process's stderr, as a descriptor of
// its own: a write to descriptor 1 or 2 that meets a closed pipe kills a
// Go process unless SIGPIPE is handled, which a serving process registers
// beside its start, while its first lines are logged; a write to another
// descriptor fails with EPIPE instead, and the line is lost, not the
// client.
func unsignalled(w io.Writer) io.Writer {
	if w != io.Writer(os.Stderr) {
		return w
	}
	raw, err := os.Stderr.SyscallConn()
	if err != nil {
		return w
	}
	dup := -1
	if err := raw.Control(func(fd uintptr) { dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0) }); err != nil || dup < 0 {
		return w
	}
	return os.NewFile(uintptr(dup), os.Stderr.Name())
}

// handled are the termination signals to handle: SIGTERM always, SIGINT
// and SIGHUP unless ignored says the process was started ignoring them
// (Go keeps such a signal ignored until Notify asks for it).
func handled(ignored func(os.Signal) bool) []os.Signal {
	sigs := []os.Signal{syscall.SIGTERM}
	for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGHUP} {
		if !ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	return sigs
}

// signalName is the conventional name of a signal, e.g. "SIGTERM".
func signalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok && unix.SignalName(s) != "" {
		return unix.SignalName(s)
	}
	return sig.String()
}

// dieOf restores the default action of sig and sends it to this process.
func dieOf(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok {
		os.Exit(exitInternal)
	}
	signal.Reset(s)
	_ = syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second) // the signal is delivered asynchronously
	os.Exit(128 + int(s))
}

// readerLeft reports whether a write failed because nobody reads its pipe
// any more (`demo | head`).
func readerLeft(err error) bool { return errors.Is(err, syscall.EPIPE) }
