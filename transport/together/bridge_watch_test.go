package together

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
	"github.com/mark3labs/mcp-go/server"
)

// probing is a bridge's Alive over a real GET / of its server, which the
// test can make fall silent as a stopped process does. It counts probes.
type probing struct {
	url    string
	silent atomic.Bool
	probes chan struct{}
}

func (p *probing) alive(ctx context.Context) error {
	select {
	case p.probes <- struct{}{}:
	default:
	}
	if p.silent.Load() {
		<-ctx.Done() // the connection is accepted, and nothing answers
		return ctx.Err()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/", nil)
	resp, err := probeClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// probeClient keeps no connection, as the product's probe keeps none.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func (p *probing) bridge(fo *failovers, goneAfter float64) func(*wire.FrameWriter) wire.Backend {
	return fo.with(bridge.Config{URL: p.url, Alive: p.alive, GoneAfter: durationMS(goneAfter)})
}

// A server that stops answering while calls wait for it (SIGSTOP, a
// suspended laptop) is gone once its probes have been silent for
// GoneAfter: the read-only call is resent where the bridge fails over to,
// the call that may have run is answered "outcome unknown".
func TestAFrozenServerFailsOverOnceItsProbesFallSilent(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	p := &probing{url: s1.url, probes: make(chan struct{}, 64)}
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, p.bridge(fo, 300))
	c.open(initRoots)
	c.call("2", "tools/list", "")

	c.send(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"write","arguments":{"what":"x"}}}`,
		`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	<-f1.blocked
	p.silent.Store(true) // the process is stopped: its calls never end

	call := fo.next()
	if !strings.Contains(call.cause.Error(), "has answered no probe") || !strings.Contains(string(call.carried.Initialize), `"name":"bridged"`) {
		t.Fatalf("Failover(%v, %+v)", call.cause, call.carried)
	}
	// What the probes waited is told, for the election to count it
	// toward its own busy grace (docs/design.md#sharing-heals).
	if s := (*bridge.SilentServer)(nil); !errors.As(call.cause, &s) || s.URL != s1.url || s.After < durationMS(300) {
		t.Fatalf("the cause %v is not %s silent for the 300ms the probes waited", call.cause, s1.url)
	}
	if a20, _ := c.answer("20"); !strings.Contains(a20, "outcome unknown") {
		t.Fatalf("the write in flight was answered %s", a20)
	}
	if a21, _ := c.answer("21"); !strings.Contains(a21, "waited") {
		t.Fatalf("the read-only call in flight was answered %s (want it resent)", a21)
	}
}

// A server whose owner has begun to exit is left at the first probe that
// says so, not once its probes were silent for GoneAfter (an hour here):
// the read-only call waiting on it is resent where the bridge fails over.
func TestAServerWhoseOwnerIsExitingIsLeftAtItsFirstProbe(t *testing.T) {
	t.Parallel()
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	p := &probing{url: s1.url, probes: make(chan struct{}, 64)}
	var ending atomic.Bool
	alive := func(ctx context.Context) error {
		if ending.Load() {
			return fmt.Errorf("%w: its owner (pid 1) has begun to exit", bridge.ErrGone)
		}
		return p.alive(ctx)
	}
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Alive: alive, GoneAfter: time.Hour}))
	c.open(initRoots)
	c.call("2", "tools/list", "")
	c.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	ending.Store(true)

	call := fo.next()
	if !strings.Contains(call.cause.Error(), "is gone: its owner (pid 1) has begun to exit") {
		t.Fatalf("Failover(%v)", call.cause)
	}
	if a21, _ := c.answer("21"); !strings.Contains(a21, "waited") {
		t.Fatalf("the read-only call in flight was answered %s (want it resent)", a21)
	}
}

// A tool that is merely slow on a live server is never cut short, however
// long past GoneAfter it runs: the server answers its probes meanwhile.
func TestASlowToolOnALiveServerIsNeverCutShort(t *testing.T) {
	t.Parallel()
	f := newFixture()
	t.Cleanup(f.releaseAll)
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	p := &probing{url: s.url, probes: make(chan struct{}, 64)}
	fo := &failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}
	// GoneAfter is long enough that a loaded machine answers each probe
	// well within it: what is proved is that the call outlives it.
	c := runStdio(t, p.bridge(fo, 1000))
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"wait"}}`)
	<-f.blocked
	for range 10 { // 10 probes, one every 200 ms: twice GoneAfter
		<-p.probes
	}
	f.releaseAll()
	if a, _ := c.answer("30"); !strings.Contains(a, "waited") {
		t.Fatalf("the slow call was answered %s", a)
	}
	select {
	case call := <-fo.calls:
		t.Fatalf("a slow tool made the bridge fail over: %v", call.cause)
	default:
	}
}

// A live server that answers every probe within the probe timeout, only
// more slowly than the bridge probes it (a loaded machine, a long GC pause),
// is not silent: the election's own probe would find it live, so a call
// that may have run on it is never cut short as "outcome unknown".
func TestALiveServerAnsweringItsProbesSlowlyIsNeverLeft(t *testing.T) {
	t.Parallel()
	f := newFixture()
	t.Cleanup(f.releaseAll)
	answered := make(chan struct{}, 64)
	s := serveHTTP(t, httpserver.Config{MCP: f.srv, Identity: func(bool) httpserver.Identity {
		// loaded: each GET / takes 300ms, well within the probe timeout
		// (testProbe), longer than a fifth of GoneAfter
		time.Sleep(300 * time.Millisecond)
		select {
		case answered <- struct{}{}:
		default:
		}
		return httpserver.Identity{Leaseholder: true}
	}})
	alive := func(ctx context.Context) error { // the node's Alive: a probe within the probe timeout
		_, conn, err := secret.Probe(ctx, s.url, testSecret, testProbe)
		if err == nil {
			conn.Close()
		}
		return err
	}
	fo := &failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: s.url, Alive: alive, GoneAfter: time.Second}))
	c.open(initRoots)
	c.call("2", "tools/list", "")
	c.send(`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"write","arguments":{"what":"x"}}}`)
	<-f.blocked
	for len(answered) > 0 { // the proofs of the bridge's connections so far
		<-answered
	}
	for range 10 { // ten probes answered: three seconds at least, thrice GoneAfter
		select {
		case <-answered:
		case call := <-fo.calls:
			t.Fatalf("a live server answering its probes within the probe timeout was left: %v", call.cause)
		case <-time.After(wait):
			t.Fatal("no probe was answered")
		}
	}
	f.releaseAll()
	if a, _ := c.answer("30"); !strings.Contains(a, "wrote x") {
		t.Fatalf("the write on a live server was answered %s", a)
	}
}

func durationMS(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// Resend safety comes from the server and survives failovers: a client
// that never lists tools has its read-only call, interrupted by the death
// of its server, resent on the first, second and third failover in a row,
// in a session or, in 2026-07-28, in none.
func TestAReadOnlyCallIsResentOnEveryFailoverWithoutTheClientListingTools(t *testing.T) {
	const modern = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
	for name, meta := range map[string]string{"legacy": "", "2026-07-28": modern} {
		t.Run(name, func(t *testing.T) {
			const servers = 4
			var fixtures []*fixture
			var urls []string
			var killers []func()
			for range servers {
				f := newFixture()
				t.Cleanup(f.releaseAll)
				s := serveHTTP(t, httpserver.Config{MCP: f.srv})
				fixtures, urls, killers = append(fixtures, f), append(urls, s.url), append(killers, s.kill)
			}
			fixtures[servers-1].releaseAll() // the last one answers
			next := 1
			fo := &failovers{t: t, calls: make(chan failoverCall, servers)}
			fo.mk = func(ctx context.Context, carried carry.Session) (wire.Backend, error) {
				if next >= servers {
					return nil, errors.New("no server left")
				}
				b, err := bridge.New(ctx, bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: urls[next], Out: fo.out, Carried: carry.Session{SafeTools: carried.SafeTools}})
				next++
				if err != nil {
					return nil, err
				}
				if err := carried.Replay(ctx, b); err != nil {
					b.Close()
					return nil, err
				}
				return b, nil
			}
			c := runStdio(t, fo.bridge(urls[0]))
			if meta == "" {
				c.open(initRoots) // and never tools/list
			}
			c.send(`{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"wait"` + meta + `}}`)
			for i := range servers - 1 {
				select {
				case <-fixtures[i].blocked: // the call runs on server i…
					killers[i]() // …which dies under it
				case <-time.After(wait):
					a, _ := c.answer("40")
					t.Fatalf("the call was not sent to server %d; it was answered %s", i, a)
				}
			}
			if a, _ := c.answer("40"); !strings.Contains(a, "waited") {
				t.Fatalf("after %d failovers the read-only call was answered %s", servers-1, a)
			}
		})
	}
}

// A legacy client whose tools/call came with _meta (a progress token)
// before it initialized still has its bridge learn the tools once it has:
// its read-only call is resent after a failover.
func TestAnEarlyCallWithMetaLeavesTheToolsToLearn(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	t.Cleanup(f1.releaseAll)
	f2.releaseAll()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 2)}
	c := runStdio(t, fo.bridge(s1.url))
	if a := c.call("39", "tools/call", `{"name":"wait","_meta":{"progressToken":1}}`); !strings.Contains(a, "initialize") {
		t.Fatalf("the early call was answered %s", a)
	}
	c.open(initRoots)
	c.send(`{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"wait"}}`)
	select {
	case <-f1.blocked: // the call runs on server 1…
		s1.kill() // …which dies under it
	case <-time.After(wait):
		t.Fatal("the call was not sent")
	}
	if a, _ := c.answer("40"); !strings.Contains(a, "waited") {
		t.Fatalf("after a failover the read-only call was answered %s", a)
	}
}

// A server that freezes before a 2026-07-28 client's first calls fails the
// bridge's own asking for the tools, in the client's name: the bridge
// leaves it then, the calls unsent (those that waited for the asking too),
// so that they are answered where the bridge goes next, after that one
// busy grace, and not sent to the frozen server to wait a second one and
// come back "outcome unknown".
func TestAServerFrozenBeforeAModernCallIsLeftBeforeTheCall(t *testing.T) {
	const modern = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	frozen := make(chan struct{})
	f1.hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, _ any) error {
		select { // every request waits: the server is frozen
		case <-ctx.Done():
		case <-frozen:
		}
		return nil
	})
	t.Cleanup(func() { close(frozen) })
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	p := &probing{url: s1.url, probes: make(chan struct{}, 64)}
	p.silent.Store(true)
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, p.bridge(fo, 500))
	for _, id := range []string{"40", "41"} { // the second waits for the first's asking
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"wait"` + modern + `}}`)
	}
	for _, id := range []string{"40", "41"} {
		if a, _ := c.answer(id); !strings.Contains(a, "waited") {
			t.Fatalf("call %s was answered %s", id, a)
		}
	}
}

// A bridge that fails over from a server that fell silent ends the
// session it left there once that server answers again, even one whose
// stream never opened (a stream that drops ends its session by itself):
// a server that lost its lease meanwhile would otherwise serve it on, for
// nobody, until its idle timeout.
func TestASessionLeftOnASilentServerIsEndedWhenItAnswers(t *testing.T) {
	f1, f2 := newFixture(), newFixture()
	f2.releaseAll()
	t.Cleanup(f1.releaseAll)
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	p := &probing{url: s1.url, probes: make(chan struct{}, 64)}
	fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
	c := runStdio(t, p.bridge(fo, 300))
	c.send(initRoots) // no notifications/initialized: no stream is opened
	c.answer("1")
	s1.count.waitFor(t, 1)

	c.send(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"wait"}}`)
	<-f1.blocked
	p.silent.Store(true)
	fo.next()
	s1.count.waitFor(t, 0)
}

// A stopped server's kernel still accepts connections: a message sent on
// a new one waits for the proof the bridge asks first, which never comes.
// It provably did not run, and the failover says for how long the server
// answered nothing, as the watch's probes would.
func TestAServerThatAcceptsButNeverProvesIsSilent(t *testing.T) {
	url := frozenServer(t)
	const proof = 200 * time.Millisecond
	fo := &failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}
	c := runStdio(t, fo.with(bridge.Config{URL: url, ProbeTimeout: proof}))
	if a := c.open(initRoots); !strings.Contains(a, `"id":1,"result"`) {
		t.Fatalf("initialize answered %s", a)
	}
	call := fo.next()
	if s := (*bridge.SilentServer)(nil); !errors.As(call.cause, &s) || s.URL != url || s.After < proof || !strings.Contains(call.cause.Error(), "did not prove") {
		t.Fatalf("the cause %v is not %s silent for at least %s", call.cause, url, proof)
	}
}

// One probe that a live server does not answer (a slow GET /) never
// leaves it: an idle 2026-07-28 bridge's probes are a ping's, whatever its
// presence was silent for before. Here the server writes no keep-alive (an
// older build), or the bridge's heartbeat is below its keep-alive.
func TestOneSlowIdleProbeNeverLeavesALiveServer(t *testing.T) {
	t.Parallel()
	for _, keepAlive := range []time.Duration{time.Hour, 1500 * time.Millisecond} {
		f1, f2 := newFixture(), newFixture()
		f2.releaseAll()
		t.Cleanup(f1.releaseAll)
		srv := server.NewMCPServer("listening", "1", server.WithPromptCapabilities(true), server.WithToolCapabilities(true))
		s1 := serveHTTP(t, httpserver.Config{MCP: srv, PresenceID: bridge.PresenceID, ListenKeepAlive: keepAlive})
		probes := make(chan struct{}, 64)
		var slow atomic.Bool
		alive := func(ctx context.Context) error {
			probes <- struct{}{}
			if slow.CompareAndSwap(true, false) {
				return errors.New("one slow probe")
			}
			return nil
		}
		fo := &failovers{t: t, f: f2, calls: make(chan failoverCall, 4)}
		c := runStdio(t, fo.with(bridge.Config{URL: s1.url, Heartbeat: time.Second, ProbeTimeout: 200 * time.Millisecond,
			Alive: alive, GoneAfter: time.Second}))
		c.send(modernRequest(1, "tools/list", ""))
		c.answer("1")
		for range 3 { // the presence has been silent for a while: answered probes
			<-probes
		}
		slow.Store(true)
		for range 2 { // the slow one, and the next, answered
			select {
			case <-probes:
			case call := <-fo.calls:
				t.Fatalf("keep-alive %s: one slow probe left a live server: %v", keepAlive, call.cause)
			case <-time.After(wait):
				t.Fatalf("keep-alive %s: no probe came", keepAlive)
			}
		}
	}
}

// An idle 2026-07-28 bridge whose presence cannot open (its server froze
// before: it accepts connections and proves nothing) leaves that server
// once its probes have been silent for the grace: trying to open the
// presence is not hearing the server.
func TestAPresenceThatCannotOpenOnAFrozenServerLeavesIt(t *testing.T) {
	t.Parallel()
	url := frozenServer(t)
	alive := func(ctx context.Context) error { // a frozen server: every probe times out
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
			return context.DeadlineExceeded
		}
	}
	meta := []byte(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"modern","version":"1"}}`)
	fo := &failovers{t: t, f: newFixture(), calls: make(chan failoverCall, 4)}
	runStdio(t, fo.with(bridge.Config{URL: url, Heartbeat: 3 * time.Second, ProbeTimeout: 200 * time.Millisecond,
		Alive: alive, GoneAfter: time.Second, Carried: carry.Session{Meta: meta}}))
	select {
	case call := <-fo.calls:
		if s := (*bridge.SilentServer)(nil); !errors.As(call.cause, &s) {
			t.Fatalf("the bridge left for %v, not its server's silence", call.cause)
		}
	case <-time.After(2 * wait):
		t.Fatal("an idle 2026-07-28 bridge never left a server frozen before its presence opened")
	}
}

// frozenServer is the URL of a stopped server, as its kernel keeps it: it
// accepts connections, and never reads nor answers on them.
func frozenServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range held {
			conn.Close()
		}
	})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	return "http://" + ln.Addr().String()
}
