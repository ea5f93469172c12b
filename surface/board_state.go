package surface

import "slices"

// The board's part of the checkout's shared state (state.go): the peers
// that announced. A board that is the checkout's gives its sink each of
// them as it changes (an announcement, a departure); the board of the
// server that takes over lists them, departed, until each is back.

// keep makes the board the checkout's: the announcers of loaded, the
// board of the server before, are listed as departed — each is back when
// a session claims its id — unless an attached peer here holds the id;
// sink is given every announcer that changes from now on. It returns the
// announcers, as the shared state keeps them.
func (b *Board) keep(loaded []Peer, sink func(Peer)) []Peer {
	defer b.change()()
	b.expire(b.now())
	var restored []*Peer
	for _, lp := range loaded {
		if lp.Announcement == nil {
			continue
		}
		if _, ok := b.reclaim(lp.ID); !ok { // a departed peer here under the id is the checkout's record of it
			continue
		}
		q := copyPeer(&lp)
		q.Attached, q.Client = false, bounded(q.Client, unnamed)
		restored = append(restored, &q)
	}
	b.order = append(restored, b.order...)
	b.prune()
	b.sink = sink
	return b.announcers()
}

// renumber gives every attached peer numbered while the checkout's counter
// failed (Counted) a new number as the board becomes the checkout's: the
// one it has may be another client's there. A departed one is dropped: a
// client that claimed its id there would take its announcement for its
// own, and what it had went on with its session (a client served alone
// that joined). It returns the ids changed, from the old to the new.
func (b *Board) renumber() map[string]string {
	defer b.change()()
	b.order = slices.DeleteFunc(b.order, func(p *Peer) bool {
		if p.Attached || !b.uncounted[p.ID] {
			return false
		}
		b.forget(p)
		return true
	})
	renamed := map[string]string{}
	for _, p := range b.order {
		if old := p.ID; p.Attached && b.uncounted[old] {
			id := b.newID()
			if b.uncounted[id] { // the counter failed again: it stays as it was
				delete(b.uncounted, id)
				continue
			}
			p.ID = id
			renamed[old] = p.ID
			if rec := b.byID[old]; rec != nil && rec.peer == p {
				delete(b.byID, old)
				b.byID[p.ID] = rec
			}
		}
	}
	return renamed
}

// unkeep stops giving the sink anything.
func (b *Board) unkeep() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sink = nil
}

// announcers are the last departedKept peers that announced, attached or
// not, in board order.
func (b *Board) announcers() []Peer {
	var out []Peer
	for _, p := range b.order {
		if p.Announcement != nil {
			out = append(out, copyPeer(p))
		}
	}
	return out[max(0, len(out)-departedKept):]
}
