//go:build !unix && !windows

package main

import (
	"io"
	"os"
	"os/signal"
)

// Elsewhere only an interrupt is relayed, where the system has one.

func notifyHandled(termination chan<- os.Signal) { signal.Notify(termination, os.Interrupt) }

func signalName(sig os.Signal) string { return sig.String() }

func dieOf(os.Signal) { os.Exit(exitInternal) }

func unsignalled(w io.Writer) io.Writer { return w }

// readerLeft reports whether a write failed because nobody reads its pipe
// any more: nothing tells it here.
func readerLeft(error) bool { return false }
