package together

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A session the server opens for an initialize that was in flight when its
// bridge was closed is ended by the bridge: nobody else knows it, and the
// server would serve on for nobody until its idle timeout.
func TestASessionOpenedAfterItsBridgeClosedIsEnded(t *testing.T) {
	f := newFixture()
	entered, release := f.holdInitialize()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan []byte)
	go func() { answered <- b.Handle(t.Context(), []byte(initialize)) }()
	<-entered
	closeReleasing(t, b, release, s) // Close waits for the initialize under way, a probe timeout at most
	<-answered
}

// An initialize whose caller stopped waiting after the server had opened
// its session (a greeted client that leaves at once: its process's
// adoption of the bridge is stopped while the replay's initialize is
// answered) is seen through: the bridge reads the answer all the same, and
// its Close ends that session. (It was left on the server, its peer id
// held, until the server's idle timeout.)
func TestASessionOpenedForACallerThatStoppedWaitingIsEnded(t *testing.T) {
	s, g, b := gatedBridge(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	answered := make(chan []byte)
	go func() { answered <- b.Handle(ctx, []byte(initialize)) }()
	<-g.held // the server opened the session and answered
	if n := s.Sessions(); n != 1 {
		t.Fatalf("the server holds %d sessions, want the one being opened", n)
	}
	cancel()
	<-answered
	closeReleasing(t, b, g.release, s)
}

// The same holds for the session a bridge opens again on the client's
// behalf when the server forgot the one it had: a caller that stops
// waiting while that initialize is answered does not cut it short. (The
// session was left on the server, its peer id held.)
func TestASessionOpenedAgainForACallerThatStoppedWaitingIsEnded(t *testing.T) {
	s, g, b := gatedBridge(t, 2)
	if answer := b.Handle(t.Context(), []byte(initialize)); !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("initialize answered %s", answer)
	}
	if resp, body := newClient(t, s.url).do("DELETE", "/mcp", g.session(1), ""); resp.StatusCode != 200 && resp.StatusCode != 204 {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body) // the server forgets the bridge's session
	}
	ctx, cancel := context.WithCancel(t.Context())
	answered := make(chan []byte)
	go func() { answered <- b.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)) }()
	<-g.held // the server opened the session again and answered
	if n := s.Sessions(); n != 1 {
		t.Fatalf("the server holds %d sessions, want the one being opened again", n)
	}
	cancel()
	closeReleasing(t, b, g.release, s)
	<-answered
}

// A client's initialize answered after its bridge left the server
// (another message met a failure meanwhile) is not the client's: the
// client was handed on without it. The session it opened is ended there,
// and the initialize is for what serves next, whole. (It was answered: the
// client then spoke to a session nothing carried, and the one opened
// stayed on the server, its peer id held, until the server's idle timeout.)
func TestASessionOpenedAfterItsBridgeLeftIsEndedAndItsInitializeResent(t *testing.T) {
	s, g, b := gatedBridge(t, 1)
	type relayed struct {
		answer []byte
		err    error
	}
	opening := make(chan relayed, 1)
	go func() {
		answer, err := b.Relay(t.Context(), []byte(initialize))
		opening <- relayed{answer, err}
	}()
	<-g.held               // the server opened the session and answered
	g.refusing.Store(true) // so the next message's connection fails, and the bridge leaves
	var gone *bridge.Gone
	if _, err := b.Relay(t.Context(), []byte(modernRequest(2, "tools/list", ""))); !errors.As(err, &gone) {
		t.Fatalf("a message whose connection failed: %v, want the bridge gone", err)
	}
	g.refusing.Store(false)
	close(g.release)
	r := <-opening
	if !errors.As(r.err, &gone) {
		t.Fatalf("an initialize answered after its bridge left: %s, %v; want it for what serves next", r.answer, r.err)
	}
	s.count.waitFor(t, 0) // the session it opened, ended
	next, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if answer := gone.Resend(t.Context(), next, []byte(initialize)); !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("the initialize resent to what serves next: %s", answer)
	}
}

// gatedBridge is a bridge to a new server through an answerGate that holds
// the answer opening the nth session.
func gatedBridge(t *testing.T, nth int) (*served, *answerGate, *bridge.Bridge) {
	t.Helper()
	f := newFixture()
	f.releaseAll()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	g := newAnswerGate(t, s.url, nth)
	b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: g.url, Out: wire.NewFrameWriter(io.Discard)})
	if err != nil {
		t.Fatal(err)
	}
	return s, g, b
}

// closeReleasing closes b while release lets the answer held back through,
// and then wants s to hold no session: the bridge ended the one that
// answer opened.
func closeReleasing(t *testing.T, b *bridge.Bridge, release chan struct{}, s *served) {
	t.Helper()
	closed := make(chan struct{})
	go func() {
		b.Close()
		close(closed)
	}()
	close(release)
	<-closed
	if n := s.Sessions(); n != 0 {
		t.Fatalf("the server holds %d sessions after the bridge that opened them was closed", n)
	}
}

// answerGate is a loopback proxy to a server that holds back, until
// release, the answer that opens the nth session it sees (the first bytes
// from the server naming a new one); held is closed when it has it.
// While refusing, it closes new connections at once.
type answerGate struct {
	url           string
	held, release chan struct{}
	refusing      atomic.Bool // new connections are closed at once

	mu  sync.Mutex
	ids []string // the sessions opened, in order
}

func newAnswerGate(t *testing.T, target string, nth int) *answerGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	g := &answerGate{url: "http://" + ln.Addr().String(), held: make(chan struct{}), release: make(chan struct{})}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			if g.refusing.Load() {
				conn.Close()
				continue
			}
			up, err := net.Dial("tcp", target[len("http://"):])
			if err != nil {
				conn.Close()
				continue
			}
			t.Cleanup(func() { conn.Close(); up.Close() })
			go func() { _, _ = io.Copy(up, conn); up.Close() }()
			go func() {
				buf := make([]byte, 64<<10)
				for {
					n, err := up.Read(buf)
					if n > 0 && g.opens(buf[:n]) == nth {
						close(g.held)
						<-g.release
					}
					if n > 0 {
						if _, werr := conn.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						conn.Close()
						return
					}
				}
			}()
		}
	}()
	return g
}

// opens is the number of the session an answer opens (1 for the first),
// 0 when it names none or one seen before.
func (g *answerGate) opens(answer []byte) int {
	_, after, ok := bytes.Cut(answer, []byte("Mcp-Session-Id: "))
	if !ok {
		return 0
	}
	id, _, _ := bytes.Cut(after, []byte("\r\n"))
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, seen := range g.ids {
		if seen == string(id) {
			return 0
		}
	}
	g.ids = append(g.ids, string(id))
	return len(g.ids)
}

// session is the id of the nth session opened (1 for the first).
func (g *answerGate) session(nth int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ids[nth-1]
}

// A session left on a server that stays silent is given up at the idle
// timeout the bridge is given, the server's: the server has ended it by
// itself by then. (It was given up at the default's 90 s, whatever the
// server's timeout.)
func TestASessionLeftOnAFrozenServerIsGivenUpAtItsIdleTimeout(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f1.releaseAll()
	f2.releaseAll()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	px := newFreezer(t, s1.url)
	const idle = 300 * time.Millisecond
	gaveUp := make(chan struct{})
	var once sync.Once
	core, _ := observer.New(zapcore.DebugLevel)
	log := zap.New(core, zap.Hooks(func(e zapcore.Entry) error {
		if e.Message == "no longer trying to end the session left on the failed server: its idle timeout has passed" {
			once.Do(func() { close(gaveUp) })
		}
		return nil
	}))
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{ProbeTimeout: 200 * time.Millisecond, URL: px.url, IdleTimeout: idle, Logger: log}))
	c.open(initRoots)
	s1.count.waitFor(t, 1)

	px.freeze() // every connection to it now goes unanswered, as to a stopped process
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	fo.next()
	c.answer("2")
	select {
	case <-gaveUp:
	case <-time.After(wait):
		t.Fatalf("the bridge still tries to end its session %s after the server's idle timeout of %s", wait, idle)
	}
}

// freezer is a loopback proxy to a server that can freeze: from then on it
// drops the connections it relays and accepts new ones without ever
// answering, as the kernel of a stopped process does.
type freezer struct {
	url    string
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newFreezer(t *testing.T, target string) *freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := target[len("http://"):]
	f := &freezer{url: "http://" + ln.Addr().String(), ln: ln}
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.conns {
			c.Close()
		}
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			f.hold(conn)
			if f.frozen.Load() {
				continue
			}
			up, err := net.Dial("tcp", host)
			if err != nil {
				conn.Close()
				continue
			}
			f.hold(up)
			go func() { _, _ = io.Copy(up, conn); up.Close() }()
			go func() { _, _ = io.Copy(conn, up); conn.Close() }()
		}
	}()
	return f
}

func (f *freezer) hold(c net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns = append(f.conns, c)
}

// freeze drops every relayed connection; later ones are held unanswered.
func (f *freezer) freeze() {
	f.frozen.Store(true)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}

// Closing a bridge waits a probe timeout at most for a session it is
// opening again on the client's behalf (the server forgot the one it had),
// however long that server takes to answer, whether its stream or a
// client's message found the session gone; and the session is ended once
// answered. (Close waited for the whole re-opening, which only the
// server's answer or its silence for a busy grace ended: a client ending
// then hung, and a host killed it. Cut short instead, the re-opening left
// its session on the server, its peer id held, until the idle timeout.)
func TestClosingWaitsAProbeAtMostForASessionBeingOpenedAgain(t *testing.T) {
	t.Parallel()
	for _, by := range []string{"its stream", "a client's message"} {
		t.Run(by, func(t *testing.T) {
			s, g, b := gatedBridge(t, 2)
			if answer := b.Handle(t.Context(), []byte(initialize)); !bytes.Contains(answer, []byte(`"result"`)) {
				t.Fatalf("initialize answered %s", answer)
			}
			if by == "its stream" {
				b.Handle(t.Context(), carry.InitializedFrame) // the bridge opens its stream
			}
			// 202 while the tools/list a bridge sends once initialized is
			// answered still (a loaded machine): the session ends after it.
			if resp, body := newClient(t, s.url).do("DELETE", "/mcp", g.session(1), ""); resp.StatusCode != 200 && resp.StatusCode != 202 && resp.StatusCode != 204 {
				t.Fatalf("DELETE: %d %s", resp.StatusCode, body) // the server forgets the bridge's session
			}
			if by == "a client's message" {
				go b.Handle(t.Context(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
			}
			<-g.held // the bridge found it forgotten, and the server opened a new one
			closed := make(chan struct{})
			go func() {
				b.Close()
				close(closed)
			}()
			select {
			case <-closed:
			case <-time.After(wait):
				close(g.release)
				t.Fatalf("Close still waits after %s on a session being opened again (probe timeout %s)", wait, testProbe)
			}
			close(g.release) // the server answers at last
			s.count.waitFor(t, 0)
		})
	}
}
