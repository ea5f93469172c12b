package registry

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A host may spawn its client's server more than once for one client: the
// TypeScript SDK's second revision probes the server in a sibling process,
// reads its instructions there ("You are peer p2"), ends it, and starts
// the process it keeps. So that the instructions it kept name the peer it
// is, a client spawned by a host that had one here before, whose process
// has ended, gets that client's peer number back: the host, the number and
// the process it was given to are remembered beside the lease, for a day,
// the last hostsKept of them. A number whose process still runs is never
// given again, so two live clients of one host never share an id.

// HostsPath is the memory of the hosts' peer numbers of a lease path.
// Like the counter, it is created on first use and never removed.
func HostsPath(leasePath string) string { return leasePath + ".hosts" }

const (
	hostsKept    = 64
	hostKeptFor  = 24 * time.Hour
	hostsMaxRead = 16 << 10
)

// PeerOfHost returns the peer number the last client host spawned here was
// given, when that was within a day and the process it was given to (an
// opaque key, as alive reads it) has ended; otherwise it draws a new one
// from the counter ([NextPeer]). Either way it remembers the number for
// host, given to self. again says the number is one remembered. host and
// self are keys without spaces (a process's pid and start token).
func PeerOfHost(leasePath, host, self string, alive func(process string) bool, now time.Time) (number int, again bool, err error) {
	if !isKey(host) || !isKey(self) {
		return 0, false, fmt.Errorf("numbering a peer: the host %q or the process %q is not a key", host, self)
	}
	if err := Trusted(leasePath); err != nil {
		return 0, false, fmt.Errorf("numbering a peer: %w", err)
	}
	l, err := lockFile(context.Background(), HostsPath(leasePath), DefaultLockWait)
	if err != nil {
		return 0, false, fmt.Errorf("numbering a peer: %w", err)
	}
	defer l.Close()
	buf := make([]byte, hostsMaxRead)
	n, _ := l.ReadAt(buf, 0)
	hosts := parseHosts(buf[:n])
	number, again = hosts.lookup(host, now, alive)
	if !again {
		if number, err = NextPeer(leasePath, 0); err != nil {
			return 0, false, err
		}
	}
	// One write, never a truncation: a shorter memory is padded with blank
	// lines to the length read. Giving the file's block back made the
	// truncation wait for the disk where the file system discards freed
	// blocks, and made ext4 write the file out as it was closed, on the
	// way to the client's first answer (B1).
	memory := hosts.remember(host, number, self, now).format()
	if short := n - len(memory); short > 0 {
		memory = append(memory, bytes.Repeat([]byte{'\n'}, short)...)
	}
	if _, err = l.WriteAt(memory, 0); err != nil {
		return 0, false, fmt.Errorf("remembering a host's peer: %w", err)
	}
	return number, again, nil
}

// isKey reports whether k can be a field of the hosts file.
func isKey(k string) bool { return k != "" && !strings.ContainsAny(k, " \t\n") }

// hostPeer is one remembered host: its key, its client's number, the
// process that has it, when.
type hostPeer struct {
	host    string
	number  int
	process string
	at      time.Time
}

// hostPeers are the remembered hosts, oldest first.
type hostPeers []hostPeer

// parseHosts reads "host number process unix-seconds" lines; a line it
// cannot read is dropped.
func parseHosts(raw []byte) hostPeers {
	var out hostPeers
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			continue
		}
		number, err1 := strconv.Atoi(f[1])
		secs, err2 := strconv.ParseInt(f[3], 10, 64)
		if err1 != nil || err2 != nil || number < 1 || number > maxPeerNumber {
			continue
		}
		out = append(out, hostPeer{f[0], number, f[2], time.Unix(secs, 0)})
	}
	return out
}

// lookup is host's number, if it was remembered within hostKeptFor of now
// and the process it was given to is not alive.
func (h hostPeers) lookup(host string, now time.Time, alive func(string) bool) (int, bool) {
	for _, v := range slices.Backward(h) {
		if v.host == host && now.Sub(v.at) < hostKeptFor {
			if alive(v.process) {
				return 0, false
			}
			return v.number, true
		}
	}
	return 0, false
}

// remember is h with host's number at now, the stale and the oldest
// beyond hostsKept dropped.
func (h hostPeers) remember(host string, number int, process string, now time.Time) hostPeers {
	var out hostPeers
	for _, e := range h {
		if e.host != host && now.Sub(e.at) < hostKeptFor {
			out = append(out, e)
		}
	}
	out = append(out, hostPeer{host, number, process, now})
	return out[max(0, len(out)-hostsKept):]
}

// format writes h as parseHosts reads it.
func (h hostPeers) format() []byte {
	var b bytes.Buffer
	for _, e := range h {
		fmt.Fprintf(&b, "%s %d %s %d\n", e.host, e.number, e.process, e.at.Unix())
	}
	return b.Bytes()
}
