//go:build !unix && !windows

package rawio

import "net"

// HungUp reports false: whether a peer hung up is not asked here, and an
// HTTP server's request context tells it, later (hungup_unix.go,
// hungup_windows.go).
func HungUp(net.Conn) bool { return false }

// Refused reports false: no refusal is known here.
func Refused(error) bool { return false }
