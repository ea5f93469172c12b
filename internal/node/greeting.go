package node

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A greeting answers the client's first initialize as soon as the lease's
// first reading has proved a live server of this build, one round trip and
// the machine's verdict before the bridge could relay it (B1): with the
// bytes that server gives the session this process's bridge opens there
// next, claiming this client's peer id (surface.Greet, from what the
// server's proof said of its layer and its board). The session it opened
// becomes the one carried (clientSession.carryGreeting, under the
// session's mutex, so that nothing choosing what serves the client
// interleaves): the bridge replays it onto the server as it replays one
// answered in process while electing, and whatever serves the client
// instead (the attach failed) opens it the same way. An initialize that
// comes while the reading runs waits for it, within the patience it has
// before the election's early answers; one that comes after it, before
// anything was chosen, is greeted at once.

// proof is what the lease's first reading proved of a live server; empty
// when it proved none.
type proof struct {
	url      string
	identity json.RawMessage
}

// welcome is what a greeting is made with: the server's words, and the
// peer id this client claims there.
type welcome struct {
	greeting surface.Greeting
	peer     string
	server   string // the server's instance
}

// greeting holds the client's first initialize until the lease's first
// reading says how to greet it.
type greeting struct {
	spoke   atomic.Bool // the client's first message came
	opened  atomic.Bool // the client sent its initialize or a 2026-07-28 request (beforeOpening)
	absorb  atomic.Bool // the client was greeted: its notifications/initialized is replayed already
	mu      sync.Mutex
	waiting *waitingHello // the initialize waiting for the reading, if any
	welcome *welcome      // what the reading proved, once read
	read    bool
}

// waitingHello is the client's initialize waiting for the lease's first
// reading, and where its greeting goes.
type waitingHello struct {
	hello  surface.Handshake
	answer chan []byte // given a greeting, or closed without
}

// greeted is the greeting for msg, the client's first message, nil when
// none, and what is left of the patience msg has before the election's
// early answers (it waited part of it for the reading).
func (g *greeting) greeted(s *clientSession, msg json.RawMessage) ([]byte, time.Duration) {
	if s.n.firstRead == nil || s.patience <= 0 || g.spoke.Load() || !g.spoke.CompareAndSwap(false, true) {
		return nil, s.patience
	}
	hello, ok := surface.ReadHandshake(msg) // mostly while the reading waits on the server
	if !ok {
		return nil, s.patience
	}
	g.mu.Lock()
	if g.read { // the message came after the reading: greeted now, if nothing chose meanwhile
		defer g.mu.Unlock()
		return g.greetWith(s, hello), s.patience
	}
	w := &waitingHello{hello: hello, answer: make(chan []byte, 1)}
	g.waiting = w
	g.mu.Unlock()
	start := time.Now()
	t := time.NewTimer(s.patience)
	defer t.Stop()
	select {
	case answer := <-w.answer:
		return answer, s.patience
	case <-s.n.firstRead: // it answered w (below), or never heard of it
	case <-t.C:
	}
	g.mu.Lock()
	mine := g.waiting == w // else the reading is greeting it now
	if mine {
		g.waiting = nil
	}
	g.mu.Unlock()
	left := max(s.patience-time.Since(start), time.Nanosecond) // never 0: that would mean never
	if mine {
		return nil, left
	}
	return <-w.answer, left
}

// absorbs reports whether msg, the client's message right after its
// greeting, is its notifications/initialized: the carried session's
// replay sends that on its behalf, so the server hears it once, and the
// client's handshake is over when the replay is.
func (g *greeting) absorbs(msg json.RawMessage) bool {
	if !g.absorb.Load() || !g.absorb.CompareAndSwap(true, false) {
		return false
	}
	env, err := wire.ReadEnvelope(msg)
	return err == nil && len(env.ID) == 0 && env.Method == string(mcp.MethodNotificationInitialized)
}

// greet hears what the lease's first reading proved, before the first
// attempt takes that reading, and greets the initialize waiting for it.
func (s *clientSession) greet(p proof) {
	welcome := s.welcomeFrom(p)
	g := &s.greeting
	g.mu.Lock()
	defer g.mu.Unlock()
	g.welcome, g.read = welcome, true
	w := g.waiting
	g.waiting = nil
	if w == nil {
		return
	}
	if answer := g.greetWith(s, w.hello); answer != nil {
		w.answer <- answer
	}
	close(w.answer)
}

// welcomeFrom is what greets the client for the server p proved: nil
// unless that server runs this build and no peer on its board holds the
// peer id this client claims there (else the server names it otherwise).
func (s *clientSession) welcomeFrom(p proof) *welcome {
	g, server, ok := greetingOf(p.identity)
	if !ok {
		return nil
	}
	// The summary names each attached peer as "pN …", first or after ", ":
	// a peer id held there is found (a client's quoted name may only make
	// a free one look held).
	peer := s.n.hostPeer()
	if peer == "" || strings.HasPrefix(g.Board, peer+" ") || strings.Contains(g.Board, ", "+peer+" ") {
		return nil
	}
	g.URL = p.url
	return &welcome{greeting: g, peer: peer, server: server}
}

// greetingOf is the greeting a server's sealed identity carries, and its
// instance: false for the public answer, for none, and for another build's,
// which would greet in other words: of another version, or whose code
// greets otherwise (surface.GreetingPrint).
func greetingOf(identity []byte) (g surface.Greeting, instance string, ok bool) {
	var id struct {
		Version  string
		Instance string
		Greeting *surface.Greeting
	}
	if identity == nil || json.Unmarshal(identity, &id) != nil || id.Version != release.Version() || id.Greeting == nil ||
		id.Greeting.Declared == "" || id.Greeting.Print != surface.GreetingPrint() {
		return surface.Greeting{}, "", false
	}
	return *id.Greeting, id.Instance, true
}

// greetWith greets hello, the client's first initialize, when the reading
// proved a server and the session it opens could be made the one carried
// (g.mu held).
func (g *greeting) greetWith(s *clientSession, hello surface.Handshake) []byte {
	w := g.welcome
	if w == nil || !s.carryGreeting(hello, w.peer, w.server) {
		return nil
	}
	g.absorb.Store(true)
	s.n.log.Debug("answered this client's initialize with the words of the server at "+w.greeting.URL+", which proved itself; the session opens there next",
		zap.String("url", w.greeting.URL), zap.String("peer", w.peer))
	return surface.Greet(hello, w.peer, w.greeting)
}

// beforeOpening answers msg at once while the client has not opened its
// session (no initialize, no 2026-07-28 request yet) when every mode
// refuses or answers it alike before one (wire.Unopened): waiting for the
// election, it would run in the session its client's later initialize
// opened meanwhile (answered early), an answer no other mode gives (R8).
func (s *clientSession) beforeOpening(msg json.RawMessage) ([]byte, bool) {
	if s.greeting.opened.Load() {
		return nil, false
	}
	// a batch no server takes (an initialize or a 2026-07-28 request in
	// it) opens nothing: refused at once, as every mode refuses it
	if refusal := wire.RefusedBatch(msg); refusal != nil {
		return refusal, true
	}
	if answer, ok := wire.Unopened(msg); ok {
		return answer, true
	}
	// What Unopened leaves holds no request, or one that opens the session.
	if slices.ContainsFunc(wire.Members(msg), func(m json.RawMessage) bool {
		env, err := wire.ReadEnvelope(m)
		return err == nil && env.IsRequest()
	}) {
		s.greeting.opened.Store(true)
	}
	return nil, false
}
