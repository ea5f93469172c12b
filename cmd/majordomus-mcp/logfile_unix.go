//go:build unix

package main

import "syscall"

// openNonblocking opens a log file without waiting: a FIFO with no reader
// is refused at once (ENXIO) instead of holding the open until one comes.
const openNonblocking = syscall.O_NONBLOCK
