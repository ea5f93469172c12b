package surface

import (
	"slices"
	"strconv"
	"strings"
)

// A session opened again — carried from another server after a take-over,
// re-attached after a restart — keeps the peer id it had: it claims it, at
// its opening or at its initialize, and brings its announcement with it, so
// that it is on the board as it was from its first instant, and no number
// is drawn for it (docs/design.md#the-layer,
// docs/design.md#nothing-is-lost).

// Open adds a session's peer. A session carried from another server claims
// the id it had there and brings its announcement, so that it is on the
// board at once as it was, and no new number is drawn for it. The claim is
// granted by [Board.reclaim], with what the departed peer under the id had
// (its client, and its announcement unless the session carries one); a new session, or
// a refused claim, gets a new id. A claim of an attached sessionless peer
// (a 2026-07-28 client's, now opening a session) makes that peer the
// session's, which the claims that were that peer's still find. A session
// already on the board keeps its peer. It returns the peer's id.
func (b *Board) Open(session, transport, claim string, announced *Announcement) string {
	defer b.change()()
	if p, ok := b.bySession[session]; ok {
		return p.ID
	}
	now := b.now()
	b.expire(now)
	if rec := b.byID[claim]; claim != "" && rec != nil && rec.peer.Attached {
		// the peer of a 2026-07-28 client that now opens a session (a
		// dual-era client falling back to initialize): the same peer, as
		// an in-process client's one session is
		p := rec.peer
		b.forget(p)
		b.bySession[session] = p
		b.opened[p.ID] = session // its claims are still its own (Board.find)
		if announced != nil {
			b.announce(p, announced.Intent, announced.Scope, true, now)
		}
		return p.ID
	}
	id := claim
	b.yield(claim)
	back, claimed := b.reclaim(claim)
	if !claimed {
		id = b.newID()
	}
	p := b.add(id, Client{Name: notInitialized}, transport, now)
	b.bySession[session] = p
	if announced != nil {
		carriedOn := back != nil && !back.ConnectedAt.IsZero() // its claim with it: the peer it was (a take-over is invisible)
		if carriedOn {
			p.ConnectedAt, p.Client, p.Announcement = back.ConnectedAt, back.Client, back.Announcement
		}
		b.announce(p, announced.Intent, announced.Scope, true, now) // the same claim keeps its time
		if carriedOn && p.Announcement == back.Announcement {
			b.kept(p) // the checkout's record has it back, as announce would have said of a new claim
		}
	}
	b.bringBack(p, back)
	return p.ID
}

// Claim gives a session's peer the id it held on another server, as
// [Board.reclaim] grants one, with the departed peer's announcement unless
// the session has announced. It reports whether the claim was granted.
func (b *Board) Claim(session, id string) bool {
	defer b.change()()
	p, ok := b.bySession[session]
	if !ok {
		return false
	}
	if p.ID == id {
		return true
	}
	b.expire(b.now())
	b.yield(id)
	back, claimed := b.reclaim(id)
	if claimed {
		p.ID = id
		b.bringBack(p, back)
	}
	return claimed
}

// Drain marks the sessions on the board now as those of a server that
// lost its lease: each stays on the board until it ends, but gives its
// peer id up to a session that claims it, its client moved to the current
// server. That server may be this process's next term, on this board. It
// is a change: a page then shows the server lease-lost at once.
func (b *Board) Drain() {
	defer b.change()()
	for _, p := range b.bySession {
		p.draining = true
	}
}

// Leave marks a session its client ended while a call of its is
// answered: it stays on the board until it ends, and gives its peer id up
// meanwhile, as a draining one does (Drain), to the session its client
// opens next.
func (b *Board) Leave(session string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.bySession[session]; ok {
		p.draining = true
	}
}

// yield detaches a draining session (Drain, Leave) whose peer holds id, which a
// session opening claims: its client, moved. Only a live claimant takes it.
func (b *Board) yield(id string) {
	for session, p := range b.bySession {
		if p.ID == id && p.draining {
			b.detach(session)
		}
	}
}

// reclaim grants a claimed id, when it is one this board could have given
// (p1, p2, …) and no attached peer holds it, and drops a departed peer
// that does: whoever takes the id is that peer, back, and gets what it
// had, which reclaim returns. Ids given later do not collide with it.
func (b *Board) reclaim(id string) (back *Peer, ok bool) {
	n, ok := peerNumber(id)
	if !ok || slices.ContainsFunc(b.order, func(q *Peer) bool { return q.ID == id && q.Attached }) {
		return nil, false
	}
	b.next = max(b.next, n)
	if b.numbers != nil && n > b.drawn {
		// The checkout's counter has not given it (to this board): a new
		// peer numbered by it is never given the id later, whoever holds
		// it then.
		b.granted[n] = true
	}
	b.order = slices.DeleteFunc(b.order, func(q *Peer) bool {
		if q.ID == id {
			back = q
			b.forget(q)
			return true
		}
		return false
	})
	return back, true
}

// bringBack gives p, a departed peer back, what it had: its client's name
// until its initialize names it again (a reader never sees the peer
// nameless in between), and its announcement unless it announced anew.
func (b *Board) bringBack(p *Peer, back *Peer) {
	if back == nil {
		return
	}
	if p.Client.Name == notInitialized {
		p.Client = back.Client
	}
	if back.Announcement != nil && p.Announcement == nil {
		p.Announcement = back.Announcement
		b.kept(p)
	}
}

// maxPeerNumber is the largest number a peer id carries, as the
// checkout's counter numbers them (p1 … p999999).
const maxPeerNumber = 999999

// peerNumber reads an id of the board's form, p<n> with n from 1, up to
// six digits.
func peerNumber(id string) (int, bool) {
	digits, ok := strings.CutPrefix(id, "p")
	if !ok || len(digits) == 0 || len(digits) > 6 || digits[0] < '1' || digits[0] > '9' {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil
}

// announced reports whether a session's peer has announced.
func (b *Board) announced(session string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, ok := b.bySession[session]
	return ok && p.Announcement != nil
}
