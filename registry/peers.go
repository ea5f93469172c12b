package registry

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
)

// Peer ids are numbered per checkout and profile, not per server: every
// server the lease ever named draws its peers' numbers from one counter
// beside the lease, so that a client carried to another server after a
// take-over claims an id that no peer of the new server already has.

// maxPeerNumber is the largest number a peer id may carry (p1 … p999999);
// the counter starts again at 1 beyond it.
const maxPeerNumber = 999999

// PeerCounterPath is the counter of the peers of the servers of a lease
// path. Like the lock file, it is created on first use and never removed.
func PeerCounterPath(leasePath string) string { return leasePath + ".peers" }

// NextPeer draws the next peer number from the counter of leasePath,
// never below atLeast (one past the numbers it gave the drawer's board:
// a counter reset since gives none of them again; the counter counts it
// as given then), under an exclusive lock on the counter file itself. An unreadable count
// starts again at 1. The lease's directory must exist and be trusted
// ([Trusted]): a server that cannot write there numbers its peers on its
// own.
func NextPeer(leasePath string, atLeast int) (int, error) {
	if err := Trusted(leasePath); err != nil {
		return 0, fmt.Errorf("numbering a peer: %w", err) // nothing is made through a link, or for another user
	}
	l, err := lockFile(context.Background(), PeerCounterPath(leasePath), DefaultLockWait)
	if err != nil {
		return 0, fmt.Errorf("numbering a peer: %w", err)
	}
	defer l.Close()
	buf := make([]byte, counterWidth)
	n, _ := l.ReadAt(buf, 0)
	current, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	if err != nil || current < 0 || current >= maxPeerNumber {
		current = 0
	}
	next := max(current+1, min(atLeast, maxPeerNumber))
	// One write of a fixed width, never a truncation first: a process
	// killed at any instant leaves the count it read or the one it wrote.
	if _, err := l.WriteAt(fmt.Appendf(nil, "%-*d\n", counterWidth-1, next), 0); err != nil {
		return 0, fmt.Errorf("numbering a peer: %w", err)
	}
	return next, nil
}

// counterWidth is the counter file's length: a count, blanks and a newline.
const counterWidth = 16
