package surface

import (
	"slices"
	"strings"
)

// A session opened again — carried from another server after a take-over,
// re-attached after a restart — keeps the peer id it had: it claims it, at
// its opening or at its initialize, and brings its announcement with it, so
// that it is on the board as it was from its first instant, and no number
// is drawn for it (docs/design.md#the-layer,
// docs/design.md#nothing-is-lost).

// Open adds a peer for a session opened again: a session carried from
// another server claims the id it had there and brings its announcement,
// so that it is on the board at once as it was, and no new number is
// drawn for it. The claim is granted as [Board.Claim] grants one;
// otherwise the peer gets a new id. A session already on the board keeps
// its peer. It returns the peer's id.
func (b *Board) Open(session, transport, claim string, announced *Announcement) string {
	defer b.change()()
	if p, ok := b.bySession[session]; ok {
		return p.ID
	}
	now := b.now()
	id := ""
	if n, ok := peerNumber(claim); ok {
		b.expire(now)
		if b.free(claim) {
			id, b.next = claim, max(b.next, n) // ids given later do not collide with it
		}
	}
	if id == "" {
		id = b.newID()
	}
	p := b.add(id, Client{Name: notInitialized}, transport, now)
	b.bySession[session] = p
	if announced != nil {
		b.announce(p, announced.Intent, announced.Scope, now)
	}
	return p.ID
}

// Claim gives a session's peer the id it held on another server, when the
// id is one this board could have given (p1, p2, …) and no other attached
// peer holds it; a departed peer holding it is the same client, back. It
// reports whether the claim was granted.
func (b *Board) Claim(session, id string) bool {
	n, ok := peerNumber(id)
	if !ok {
		return false
	}
	defer b.change()()
	p, ok := b.bySession[session]
	if !ok {
		return false
	}
	if p.ID == id {
		return true
	}
	b.expire(b.now())
	if !b.free(id) {
		return false
	}
	p.ID = id
	b.next = max(b.next, n) // ids given later do not collide with it
	return true
}

// free reports whether no attached peer holds id, and drops a departed
// one that does: whoever takes the id is that peer, back.
func (b *Board) free(id string) bool {
	for _, q := range b.order {
		if q.ID == id && q.Attached {
			return false
		}
	}
	b.order = slices.DeleteFunc(b.order, func(q *Peer) bool {
		if q.ID == id {
			b.forget(q)
			return true
		}
		return false
	})
	return true
}

// peerNumber reads an id of the board's form, p<n> with n from 1, up to
// six digits.
func peerNumber(id string) (int, bool) {
	digits, ok := strings.CutPrefix(id, "p")
	if !ok || len(digits) == 0 || len(digits) > 6 || digits[0] == '0' {
		return 0, false
	}
	n := 0
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// announced reports whether a session's peer has announced.
func (b *Board) announced(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.bySession[session]
	return ok && p.Announcement != nil
}
