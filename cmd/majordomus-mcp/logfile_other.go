//go:build !unix

package main

// openNonblocking is nothing where opening a file never waits for a reader.
const openNonblocking = 0
