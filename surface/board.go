package surface

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// departedKept bounds how many departed peers that announced something the
// board keeps, so their claims stay visible for a while after they leave.
const departedKept = 32

// Client is what a peer said of itself in initialize.
type Client struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

// Announcement is what a peer said it is working on.
type Announcement struct {
	Intent string    `json:"intent"`
	Scope  []string  `json:"scope"`
	At     time.Time `json:"at"`
}

// Peer is one session on the board.
type Peer struct {
	ID           string        `json:"id"`
	Client       Client        `json:"client"`
	Transport    string        `json:"transport"`
	ConnectedAt  time.Time     `json:"connected_at"`
	LastSeen     time.Time     `json:"last_seen"`
	Attached     bool          `json:"attached"`
	Announcement *Announcement `json:"announcement,omitempty"`

	draining bool   // its session is on a server that lost its lease (Board.Drain), or its client ended it under a call (Leave)
	left     uint64 // when it left, as the board counts departures (Board.depart); 0: before this board
}

// Overlap is another peer's claim that shares paths with an announcement.
type Overlap struct {
	Peer   string   `json:"peer"`
	Client string   `json:"client"`
	Intent string   `json:"intent"`
	Paths  []string `json:"paths"`
}

// Board is the peer board of one server. It is safe for concurrent use.
type Board struct {
	mu        sync.Mutex
	now       func() time.Time
	idle      time.Duration // how long a sessionless peer stays unheard (board_modern.go)
	next      int
	left      uint64                         // the departures counted (Board.depart)
	drawn     int                            // the last number the checkout's counter gave this board
	numbers   func(atLeast int) (int, error) // the checkout's counter of peer numbers; nil or failing: next
	uncounted map[string]bool                // the ids given while the counter failed: this board's, not the checkout's
	granted   map[int]bool                   // the numbers claims were granted past drawn: the counter never gave them, and is not told
	bySession map[string]*Peer
	byID      map[string]*sessionless // the peers known from their requests alone, by id
	byWho     map[string]*sessionless // those of them found by the identity they send
	opened    map[string]string       // the session each peer of those that opened one took, by id (Board.Open)
	order     []*Peer                 // attachment order, departed announcers included
	sink      func(Peer)              // given every announcer as it changes, while the board is the checkout's
	changes   *changes                // moved by every change (changes.go)
	root      string                  // the checkout's root, as slashes: a scope under it is of the checkout
}

func newBoard(now func() time.Time, idle time.Duration, numbers func(atLeast int) (int, error), c *changes) *Board {
	if idle <= 0 {
		// The server's idle timeout is the caller's (internal/node's
		// resolved timings): a guess here would be a second owner of it.
		panic("surface: a board needs the idle timeout")
	}
	return &Board{now: now, idle: idle, numbers: numbers, changes: c, bySession: map[string]*Peer{},
		byID: map[string]*sessionless{}, byWho: map[string]*sessionless{}, opened: map[string]string{}, uncounted: map[string]bool{}, granted: map[int]bool{}}
}

// notInitialized names a session's client until its initialize names it.
const notInitialized = "(not initialized)"

// newID gives the next peer number: the checkout's, when its counter
// answers (asked for one past the last it gave this board: one reset
// since gives none of them again), else one of this board's own, never
// one it gave or granted already; never one a listed peer holds, nor
// one a claim was granted here past what the counter had given it.
// Numbers go round after p999999, as the checkout's counter does: an id
// past it could be claimed nowhere (peerNumber).
func (b *Board) newID() string {
	for {
		b.next = b.next%maxPeerNumber + 1
		counted := b.numbers == nil // a board of no checkout's (standalone) numbers alone
		if !counted {
			if n, err := b.numbers(b.drawn%maxPeerNumber + 1); err == nil {
				if from := b.drawn; n > from && len(b.granted) > 0 {
					// the counter gave those between to others: it never gives them here again
					maps.DeleteFunc(b.granted, func(k int, _ bool) bool { return k > from && k < n })
				}
				b.next, b.drawn, counted = n, n, true
			}
		}
		id := fmt.Sprintf("p%d", b.next)
		if slices.ContainsFunc(b.order, func(q *Peer) bool { return q.ID == id }) {
			continue // a number gone round to a peer still listed
		}
		if counted && b.granted[b.next] {
			delete(b.granted, b.next) // a claimant's, listed or not: it names that peer
			continue
		}
		if !counted {
			b.uncounted[id] = true
		} else {
			delete(b.uncounted, id) // once a departed peer's of this board's own: the checkout's now
		}
		return id
	}
}

// Counted reports whether id may be the checkout's, to claim on its
// server: not one this board numbered while the checkout's counter failed
// (a client served alone under an unusable lease directory), which the
// checkout may have given another client since.
func (b *Board) Counted(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.uncounted[id]
}

// add lists a new attached peer, seen now.
func (b *Board) add(id string, c Client, transport string, now time.Time) *Peer {
	at := stamp(now)
	p := &Peer{ID: id, Client: c, Transport: transport, ConnectedAt: at, LastSeen: at, Attached: true}
	b.order = append(b.order, p)
	return p
}

// stamp is how the board writes an instant.
func stamp(now time.Time) time.Time { return now.UTC().Round(time.Millisecond) }

// Detach marks a session's peer as gone. A departed peer that announced
// stays listed (attached: false) among the last few; others are dropped.
func (b *Board) Detach(session string) {
	defer b.change()()
	b.detach(session)
}

func (b *Board) detach(session string) {
	p, ok := b.bySession[session]
	if !ok {
		return
	}
	delete(b.bySession, session)
	if b.opened[p.ID] == session {
		delete(b.opened, p.ID)
	}
	b.depart(p)
	if ownClient(p) {
		p.LastSeen = stamp(b.now()) // it was there until now
	}
	b.kept(p)
	b.prune()
}

// ownClient reports whether p is the client of the board's own process
// (its stdio session), which the process answers for: it is seen for as
// long as it stays attached, and nothing has to wake the process to say
// so while the client is idle.
func ownClient(p *Peer) bool { return p.Transport == "stdio" }

// depart marks p gone, the latest peer to leave.
func (b *Board) depart(p *Peer) {
	b.left++
	p.Attached, p.left = false, b.left
}

// kept gives the sink an announcer that changed.
func (b *Board) kept(p *Peer) {
	if b.sink != nil && p.Announcement != nil {
		b.sink(copyPeer(p))
	}
}

// prune drops the departed peers that announced nothing, and the departed
// announcers beyond departedKept that left longest ago, as the shared
// state keeps the latest.
func (b *Board) prune() {
	departed := 0
	b.order = slices.DeleteFunc(b.order, func(q *Peer) bool {
		if q.Attached {
			return false
		}
		if q.Announcement == nil {
			b.forget(q)
			return true
		}
		departed++
		return false
	})
	for departed > departedKept {
		i := -1
		for j, q := range b.order {
			if !q.Attached && (i < 0 || q.left < b.order[i].left) {
				i = j
			}
		}
		b.forget(b.order[i])
		b.order = slices.Delete(b.order, i, i+1)
		departed--
	}
}

// Identify records the client a session's initialize named, in the
// checkout's record too when its announcement came before it (carried).
func (b *Board) Identify(session string, c Client) {
	defer b.change()()
	if p, ok := b.bySession[session]; ok {
		p.Client = bounded(c, unnamed) // it initialized, naming nobody
		b.kept(p)
	}
}

// maxClientText bounds each text a client says of itself (name, version,
// title) as the board keeps it: a modern client says it again with every
// request.
const maxClientText = 256

// bounded is c as the board keeps it: each text valid UTF-8 and cut to
// maxClientText characters; a blank name is unnamed.
func bounded(c Client, unnamed string) Client {
	cut := func(s string) string {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if r := []rune(s); len(r) > maxClientText {
			s = string(r[:maxClientText])
		}
		return s
	}
	c = Client{Name: cut(c.Name), Version: cut(c.Version), Title: cut(c.Title)}
	if strings.TrimSpace(c.Name) == "" {
		c.Name = unnamed
	}
	return c
}

// Touch records that a session was heard from. Only another process's
// client changes what the board shows by it: the own client is seen as of
// every reading already (Peers), and a change would wake every page's
// stream for nothing at each of its requests.
func (b *Board) Touch(session string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.bySession[session]; ok {
		p.LastSeen = stamp(b.now())
		if !ownClient(p) {
			b.changes.bump() // under the board's lock, as change does
		}
	}
}

// PeerID returns the id of a session's peer, or "" when it has none.
func (b *Board) PeerID(session string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.bySession[session]; ok {
		return p.ID
	}
	return ""
}

// peerOf is the peer a session is, or nil: it stays that peer's, its id
// as renumbered or claimed, once the session has left (idOf).
func (b *Board) peerOf(session string) *Peer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bySession[session]
}

// idOf is p's id now.
func (b *Board) idOf(p *Peer) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return p.ID
}

// Announce records a session's claim, replacing its earlier one, and returns
// its record and the other attached peers' claims that overlap it. again
// says it replays a carried announcement: one the same as the peer's keeps
// its time.
func (b *Board) Announce(session, intent string, scope []string, again bool) (Peer, []Overlap, error) {
	defer b.change()()
	p, ok := b.bySession[session]
	if !ok {
		return Peer{}, nil, fmt.Errorf("this session is not on the board")
	}
	now := b.now()
	b.expire(now)
	rec, overlaps := b.announce(p, intent, scope, again, now)
	return rec, overlaps, nil
}

// announce records p's claim and returns its record and the overlapping
// claims of the other attached peers. A replay (again) of the claim p has
// keeps it as it is, its time too.
func (b *Board) announce(p *Peer, intent string, scope []string, again bool, now time.Time) (Peer, []Overlap) {
	a := p.Announcement
	if !again || a == nil || a.Intent != intent || !slices.Equal(a.Scope, scope) {
		p.Announcement = &Announcement{Intent: intent, Scope: scope, At: stamp(now)}
		p.LastSeen = p.Announcement.At
		b.kept(p)
	}
	return b.overlapping(p)
}

// overlapping returns p's record and the claims of the other attached
// peers that overlap its own.
func (b *Board) overlapping(p *Peer) (Peer, []Overlap) {
	scope := p.Announcement.Scope
	var overlaps []Overlap
	for _, q := range b.order {
		if q == p || !q.Attached || q.Announcement == nil {
			continue
		}
		if paths := overlappingPaths(b.root, scope, q.Announcement.Scope); len(paths) > 0 {
			// one line each, bounded: whole in majordomus_peers
			overlaps = append(overlaps, Overlap{Peer: q.ID, Client: inline(q.Client.Name, maxClientText), Intent: inline(q.Announcement.Intent, maxClientText), Paths: paths})
		}
	}
	return copyPeer(p), overlaps
}

// Peers returns the board in attachment order and how many are attached;
// the process's own client, attached, is seen as of the reading.
func (b *Board) Peers() ([]Peer, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.expire(now)
	peers := make([]Peer, 0, len(b.order))
	attached := 0
	for _, p := range b.order {
		c := copyPeer(p)
		if p.Attached {
			attached++
			if ownClient(p) {
				c.LastSeen = stamp(now)
			}
		}
		peers = append(peers, c)
	}
	return peers, attached
}

// Summary is a one-line description of the attached peers, e.g.
// "p1 claude-code (stdio), p2 codex (http)".
func (b *Board) Summary() string {
	s, _ := b.summary()
	return s
}

// maxSummaryPeers bounds the attached peers a summary names, so that what
// each client calls itself, times the clients, cannot fill another's
// context: the rest are counted (majordomus_peers lists them all).
const maxSummaryPeers = 16

// summary is Summary, and how many attached peers the board has.
func (b *Board) summary() (string, int) {
	peers, _ := b.Peers()
	var parts []string
	for _, p := range peers {
		if p.Attached {
			parts = append(parts, peerLine(p.ID, p.Client.Name, p.Transport))
		}
	}
	if n := len(parts); n > maxSummaryPeers {
		return strings.Join(parts[:maxSummaryPeers], ", ") + fmt.Sprintf(" and %d more (majordomus_peers lists them)", n-maxSummaryPeers), n
	}
	return strings.Join(parts, ", "), len(parts)
}

// peerLine is one peer in a board's summary.
func peerLine(id, client, transport string) string {
	return fmt.Sprintf("%s %s (%s)", id, quoted(client), transport)
}

func copyPeer(p *Peer) Peer {
	c := *p
	if p.Announcement != nil {
		a := *p.Announcement
		a.Scope = append([]string{}, a.Scope...) // [], never null: a state another build wrote may have none
		c.Announcement = &a
	}
	return c
}

// sessions returns the ids of the sessions on the board.
func (b *Board) sessions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Sorted(maps.Keys(b.bySession))
}
