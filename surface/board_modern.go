package surface

import "time"

// A request of the 2026-07-28 revision ("modern") opens no session: it
// says who its client is in its own _meta, every time. The board knows
// such a client as one peer all the same; the rules are in the package
// doc, under Modern clients.

// unnamed names a modern client that sent no clientInfo.
const unnamed = "(unnamed)"

// ModernRequest is what the board reads of one request of the 2026-07-28
// revision.
type ModernRequest struct {
	// Session is the id of the session the request came on, "" for none.
	// Only a session on the board counts: a modern HTTP request is served
	// on an ephemeral session of its own, which is not.
	Session string
	// Claim is the peer id its _meta[PeerMeta] names, "" for none.
	Claim string
	// Client is what its _meta clientInfo says; nil when it says nothing.
	Client *Client
	// Transport names how its client is connected, for a peer it creates.
	Transport string
	// Replay says it replays its peer's carried announcement
	// (_meta[ReplayMeta]): one the same as the peer's keeps its time.
	Replay bool
}

// sessionless is the board's record of a peer known from its requests
// alone: it stays while it is heard from or holds a listen stream open.
type sessionless struct {
	peer    *Peer
	who     string // the identity it is found by when it claims no id; "" for a claimed one
	seen    uint64 // its requests, counted: was it heard from after a stream opened?
	streams int    // its open subscriptions/listen streams
}

// Sight records a modern request: it finds or creates the request's peer,
// refreshes the client it names and marks it seen now. It returns the
// peer's id.
func (b *Board) Sight(m ModernRequest) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p, shown := b.sight(m, b.now())
	if shown || !ownClient(p) { // the own client's last_seen is shown as of each reading (Touch)
		b.changes.bump() // under the board's lock, as change does
	}
	return p.ID
}

// AnnounceModern is Announce for the peer of a modern request, which it
// sights first.
func (b *Board) AnnounceModern(m ModernRequest, intent string, scope []string) (Peer, []Overlap) {
	defer b.change()()
	now := b.now()
	p, _ := b.sight(m, now)
	return b.announce(p, intent, scope, m.Replay, now)
}

// Listen records that a subscriptions/listen stream of a modern request's
// peer opened, and returns what to call, once, when it ends. A session's
// peer lives as long as its session: Listen sights it and returns nil.
func (b *Board) Listen(m ModernRequest) (end func()) { return b.stream(m, false) }

// Present records that the bridge of a modern request's peer holds its
// presence open: a subscriptions/listen stream the bridge keeps for as long
// as its process lives (docs/design.md#nothing-is-lost: a live agent stays
// on the board). The peer is attached while it is open, however long its
// client is silent, and leaves the board as soon as it ends and no other
// stream of its is open: its process ended, or its bridge moved to another
// server. It returns what to call, once, when it ends (nil for a session's
// peer).
func (b *Board) Present(m ModernRequest) (end func()) { return b.stream(m, true) }

// stream records that a stream of m's peer opened, and returns what ends
// it (nil for a session's peer). A presence's end is its peer's leaving,
// seen until then, however it was heard from meanwhile.
func (b *Board) stream(m ModernRequest, presence bool) (end func()) {
	defer b.change()()
	p, _ := b.sight(m, b.now())
	rec := b.byID[p.ID]
	if rec == nil || rec.peer != p {
		return nil
	}
	rec.streams++
	opened := rec.seen
	return func() {
		defer b.change()()
		if b.byID[rec.peer.ID] != rec {
			return // its peer is a session's now (Board.Open), or was dropped
		}
		now := b.now()
		if presence {
			opened, rec.peer.LastSeen = rec.seen, stamp(now)
		}
		b.streamEnded(rec, opened, now)
	}
}

// streamEnded closes one of rec's streams. With none left open, a peer
// heard from only through the stream leaves with it; one heard from
// otherwise too was alive until now, and its idle time starts now.
func (b *Board) streamEnded(rec *sessionless, opened uint64, now time.Time) {
	rec.streams--
	if rec.streams > 0 || !rec.peer.Attached {
		return
	}
	if rec.seen == opened {
		b.depart(rec.peer)
		b.kept(rec.peer)
		b.prune()
		return
	}
	rec.peer.LastSeen = stamp(now)
}

// sight finds or creates m's peer and marks it seen at now; shown says
// whether that changed what the board shows of it beyond its last_seen.
func (b *Board) sight(m ModernRequest, now time.Time) (p *Peer, shown bool) {
	b.expire(now)
	rec, p, id, back := b.find(m)
	if p == nil {
		b.makeRoom()
		rec = &sessionless{}
		if id == "" {
			id, rec.who = b.newID(), identity(m.Client)
			b.byWho[rec.who] = rec
		}
		p = b.add(id, Client{Name: unnamed}, m.Transport, now)
		b.bringBack(p, back)
		rec.peer = p
		b.byID[id] = rec
		shown = true
	}
	if rec != nil {
		if !p.Attached { // back after it was taken for gone: the same peer, its claim kept
			p.Attached, p.ConnectedAt, shown = true, stamp(now), true
		}
		rec.seen++
	}
	p.LastSeen = stamp(now)
	was := p.Client
	if m.Client != nil {
		p.Client = bounded(*m.Client, unnamed)
	} else if p.Client.Name == notInitialized {
		p.Client.Name = unnamed // a modern client never initializes
	}
	return p, shown || p.Client != was
}

// find returns m's peer, or nil and the id its new peer takes ("" for a
// new number) with the departed peer under that id, if any. In
// order: the peer of the session m came on; the peer its claim names (a
// sessionless one, or one that opened a session since: Board.Open), or
// the claimed id as [Board.reclaim] grants it; the peer of the identity it
// sends.
func (b *Board) find(m ModernRequest) (rec *sessionless, p *Peer, id string, back *Peer) {
	if p, ok := b.bySession[m.Session]; ok && m.Session != "" {
		return nil, p, "", nil
	}
	if rec := b.byID[m.Claim]; rec != nil {
		return rec, rec.peer, "", nil
	}
	if p := b.bySession[b.opened[m.Claim]]; p != nil && p.ID == m.Claim {
		return nil, p, "", nil // a sessionless peer that opened a session: what claimed it before still does
	}
	if back, ok := b.reclaim(m.Claim); ok {
		return nil, nil, m.Claim, back
	}
	if rec := b.byWho[identity(m.Client)]; rec != nil {
		return rec, rec.peer, "", nil
	}
	return nil, nil, "", nil
}

// identity is the key of a client that claims no id: its name and
// version, as bounded.
func identity(c *Client) string {
	if c == nil {
		return "\x00"
	}
	k := bounded(*c, "")
	return k.Name + "\x00" + k.Version
}

// expire takes for gone the sessionless peers unheard for the idle timeout
// that hold no stream open.
func (b *Board) expire(now time.Time) {
	gone := false
	for _, rec := range b.byID {
		if p := rec.peer; p.Attached && rec.streams == 0 && now.Sub(p.LastSeen) >= b.idle {
			b.depart(p)
			gone = true
			b.kept(p)
		}
	}
	if gone {
		b.prune()
		b.changes.bump()
	}
}

// maxSessionless bounds the attached peers known from their requests
// alone, which no session cap counts: a client that sends every request
// under a new name makes a new peer each time (docs/security.md#bounded).
const maxSessionless = 512

// makeRoom takes for gone, when the sessionless peers are as many as
// maxSessionless, the one heard from longest ago that holds no stream open
// (those that do are bounded by the server's connections).
func (b *Board) makeRoom() {
	var oldest *Peer
	n := 0
	for _, rec := range b.byID {
		if p := rec.peer; p.Attached {
			n++
			if rec.streams == 0 && (oldest == nil || p.LastSeen.Before(oldest.LastSeen)) {
				oldest = p
			}
		}
	}
	if n >= maxSessionless && oldest != nil {
		b.depart(oldest)
		b.kept(oldest)
		b.prune()
	}
}

// forget drops what the board knows of p beyond its listing.
func (b *Board) forget(p *Peer) {
	rec := b.byID[p.ID]
	if rec == nil || rec.peer != p {
		return
	}
	delete(b.byID, p.ID)
	if b.byWho[rec.who] == rec {
		delete(b.byWho, rec.who)
	}
}
