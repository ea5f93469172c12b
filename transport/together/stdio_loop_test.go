package together

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// session runs a stdio loop over pipes against a real MCPServer.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	ending chan stdio.Ending
	srv    *server.MCPServer
	local  *stdio.Local
}

func newSession(t *testing.T, out io.Writer) *session {
	t.Helper()
	srv := server.NewMCPServer("test", "0.0.1", server.WithToolCapabilities(true), server.WithResourceCapabilities(true, true))
	srv.AddTool(mcp.NewTool("echo", mcp.WithString("msg")), func(_ context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("echo: " + r.GetString("msg", "")), nil
	})
	inR, inW := io.Pipe()
	s := &session{t: t, in: inW, lines: make(chan string, 100), ending: make(chan stdio.Ending, 1), srv: srv}
	if out == nil {
		outR, outW := io.Pipe()
		out = outW
		go func() {
			dec := bufioLines(outR)
			for l := range dec {
				s.lines <- l
			}
		}()
		t.Cleanup(func() { outW.Close() })
	}
	fw := wire.NewFrameWriter(out)
	local, err := stdio.NewLocal(context.Background(), srv, fw, "stdio")
	if err != nil {
		t.Fatal(err)
	}
	s.local = local
	go func() {
		loop := stdio.Loop{In: inR, Out: fw, Backend: local}
		s.ending <- loop.Serve(context.Background())
		local.Close()
	}()
	return s
}

func bufioLines(r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		buf := make([]byte, 0, 1<<20)
		tmp := make([]byte, 64<<10)
		for {
			n, err := r.Read(tmp)
			buf = append(buf, tmp[:n]...)
			for {
				i := bytes.IndexByte(buf, '\n')
				if i < 0 {
					break
				}
				ch <- string(buf[:i])
				buf = buf[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	return ch
}

func (s *session) send(lines ...string) {
	for _, l := range lines {
		if _, err := io.WriteString(s.in, l+"\n"); err != nil {
			s.t.Errorf("writing %q: %v", l, err) // not Fatalf: send may run on its own goroutine
			return
		}
	}
}

func (s *session) next() string {
	s.t.Helper()
	select {
	case l := <-s.lines:
		return l
	case <-time.After(10 * time.Second):
		s.t.Fatal("no frame within 10s")
		return ""
	}
}

func (s *session) close() stdio.Ending {
	s.t.Helper()
	s.in.Close()
	select {
	case e := <-s.ending:
		return e
	case <-time.After(10 * time.Second):
		s.t.Fatal("the loop did not end within 10s of EOF")
		return ""
	}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func TestBadBytesAreAnsweredAndTheSessionGoesOn(t *testing.T) {
	s := newSession(t, nil)
	cases := []struct {
		line, want string
	}{
		{"not json", `"code":-32700`},
		{"\xff\xfe{}", `parse error: input is not UTF-8`},
		{`{"jsonrpc":"2.0","id":`, `"code":-32700`},
		{"[]", `invalid request: empty batch`},
		{"42", `"code":-32600`},
		{`"a string"`, `"code":-32600`},
		{`null`, `"code":-32600`},
	}
	for _, c := range cases {
		s.send(c.line)
		if got := s.next(); !strings.Contains(got, c.want) || !strings.Contains(got, `"id":null`) {
			t.Errorf("line %q: answer %s, want %s with id null", c.line, got, c.want)
		}
	}
	s.send("", "   ", initialize) // blank lines get no answer
	if got := s.next(); !strings.Contains(got, `"id":1,"result"`) {
		t.Fatalf("after bad bytes, initialize answered %s", got)
	}
	if e := s.close(); e != stdio.InputEnded {
		t.Fatalf("ending %q, want %q", e, stdio.InputEnded)
	}
}

func TestAnOverlongLineIsRefusedAndTheSessionGoesOn(t *testing.T) {
	s := newSession(t, nil)
	go s.send(`{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"`+strings.Repeat("x", 16<<20) /* the most a line may hold */ +`"}}`, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
	if got := s.next(); !strings.Contains(got, "longer than 16 MiB") {
		t.Fatalf("overlong line answered %s", got)
	}
	if got := s.next(); got != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Fatalf("next line answered %s", got)
	}
	s.close()
}

// A message over maxMessageBytes is refused by the loop, whatever serves
// the client, with its id; one of exactly the limit is served.
func TestAMessageOverTheSizeLimitIsRefusedWithItsID(t *testing.T) {
	s := newSession(t, nil)
	s.send(initialize)
	s.next()
	pad := func(id string, size int) string {
		head, tail := `{"jsonrpc":"2.0","id":`+id+`,"method":"ping","params":{"pad":"`, `"}}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	go s.send(pad("7", wire.MaxMessageBytes+1), pad("8", wire.MaxMessageBytes))
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request: the message is 1048577 bytes, over the limit of 1048576 bytes"}}`
	if got := s.next(); got != want {
		t.Fatalf("an oversized message answered %s, want %s", got, want)
	}
	if got := s.next(); got != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Fatalf("a message of the limit answered %s", got)
	}
	big := `[{"jsonrpc":"2.0","method":"notifications/x"},` + pad("9", wire.MaxMessageBytes) + `]`
	go s.send(big)
	if got := s.next(); !strings.HasPrefix(got, `[{"jsonrpc":"2.0","id":9,"error":{"code":-32600`) {
		t.Fatalf("an oversized batch answered %s", got)
	}
	s.close()
}

func TestABatchIsAnsweredAsABatch(t *testing.T) {
	s := newSession(t, nil)
	s.send(initialize)
	s.next()
	s.send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"x","method":"no/such"}]`)
	var batch []map[string]any
	if err := json.Unmarshal([]byte(s.next()), &batch); err != nil {
		t.Fatal(err)
	}
	if len(batch) != 2 || batch[0]["id"] != float64(2) || batch[1]["id"] != "x" {
		t.Fatalf("batch answer %v: want the ping and the unknown method, in order", batch)
	}
	if code := batch[1]["error"].(map[string]any)["code"]; code != float64(-32601) {
		t.Fatalf("unknown method code %v, want -32601", code)
	}
	// a batch of notifications owes nothing: the next frame answers the ping after it
	s.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, `{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if got := s.next(); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Fatalf("got %s", got)
	}
	s.close()
}

func TestNotificationsReachTheClient(t *testing.T) {
	s := newSession(t, nil)
	s.send(initialize)
	s.next()
	s.srv.SendNotificationToAllClients(mcp.MethodNotificationResourcesListChanged, nil)
	if got := s.next(); !strings.Contains(got, `"method":"notifications/resources/list_changed"`) {
		t.Fatalf("got %s", got)
	}
	s.close()
}

func TestEveryAnswerUnderWayIsWrittenBeforeTheLoopEnds(t *testing.T) {
	var out lockedBuffer
	s := newSession(t, &out)
	for range 20 {
		s.send("not json") // answered by the loop itself
	}
	for i := range 20 { // answered by the backend, each on its own goroutine
		s.send(`{"jsonrpc":"2.0","id":` + itoa(100+i) + `,"method":"ping"}`)
	}
	if e := s.close(); e != stdio.InputEnded {
		t.Fatalf("ending %q", e)
	}
	if n := strings.Count(out.String(), "\n"); n != 40 {
		t.Fatalf("%d frames written before the loop ended, want 40:\n%s", n, out.String())
	}
}

func TestABrokenStdoutEndsTheLoop(t *testing.T) {
	s := newSession(t, brokenPipe{})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	select {
	case e := <-s.ending:
		if e != stdio.OutputClosed {
			t.Fatalf("ending %q, want %q", e, stdio.OutputClosed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the loop went on writing to a broken stdout")
	}
	s.in.Close()
}

// A client that closed its end of stdout is owed nothing more: the calls
// under way are cancelled, and the loop ends at once, rather than once the
// slowest of them is done (a fleet inventory waiting on a locked registry,
// a bridge waiting on a stopped server), for nobody.
func TestABrokenStdoutCancelsTheCallsUnderWay(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outW.Close() })
	s := newSession(t, outW)
	running, cancelled := make(chan struct{}), make(chan struct{})
	s.srv.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(running)
		<-ctx.Done() // what else ends it, the test's end, comes after the loop's
		close(cancelled)
		return mcp.NewToolResultText("too late"), nil
	})
	s.send(initialize, `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)
	<-running
	outR.Close()
	s.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`) // its answer meets the broken pipe
	select {
	case e := <-s.ending:
		if e != stdio.OutputClosed {
			t.Fatalf("ending %q, want %q", e, stdio.OutputClosed)
		}
	case <-time.After(wait):
		t.Fatal("the loop waits for a call under way whose client closed stdout")
	}
	<-cancelled
	s.in.Close()
}

// A client that quit closed stdin and stdout together: the loop hears
// stdin's end first (stdout breaks only at the next write) and waits for
// the calls under way, which are owed to a client that reads still. Once
// a write meets the broken stdout, nobody is owed them: they are
// cancelled, as when stdout breaks first, rather than waited for until
// the slowest is done, for nobody.
func TestAStdoutBrokenAfterStdinEndedCancelsTheCallsUnderWay(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { outW.Close() })
	inR, inW := io.Pipe()
	b := &outlived{running: make(chan struct{}, 2), release: make(chan struct{}), heard: make(chan struct{}), cancelled: make(chan struct{})}
	ending := make(chan stdio.Ending, 1)
	go func() {
		loop := stdio.Loop{In: inR, Out: wire.NewFrameWriter(outW), Backend: b}
		ending <- loop.Serve(context.Background())
	}()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"slow"}`+"\n"+`{"jsonrpc":"2.0","id":3,"method":"held"}`+"\n")
	<-b.running
	<-b.running
	outR.Close() // the client quit: both its pipes are closed
	inW.Close()
	<-b.heard        // the loop heard stdin's end, and waits for the calls under way
	close(b.release) // the held call's answer meets the broken stdout
	select {
	case <-ending:
	case <-time.After(wait):
		t.Fatal("the loop waits for a call under way though its answer can reach nobody: stdout broke")
	}
	<-b.cancelled
}

// outlived holds a subscriptions/listen until its context ends (heard),
// the method slow until its context ends (cancelled), and the method held
// until release.
type outlived struct {
	running, release, heard, cancelled chan struct{}
}

func (o *outlived) Handle(ctx context.Context, msg json.RawMessage) []byte {
	env, _ := wire.ReadEnvelope(msg)
	switch env.Method {
	case string(mcp.MethodSubscriptionsListen):
		<-ctx.Done()
		close(o.heard)
	case "slow":
		o.running <- struct{}{}
		<-ctx.Done()
		close(o.cancelled)
	case "held":
		o.running <- struct{}{}
		<-o.release
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":{}}`)
}

func TestFramesAreCompactedOntoOneLine(t *testing.T) {
	var out lockedBuffer
	fw := wire.NewFrameWriter(&out)
	if err := fw.Write([]byte("{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1\n}")); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "{\"jsonrpc\":\"2.0\",\"id\":1}\n" {
		t.Fatalf("got %q", got)
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("write |1: broken pipe") }

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// gate answers "block" only once released, and everything else at once.
type gate struct{ release chan struct{} }

func (g gate) Handle(ctx context.Context, msg json.RawMessage) []byte {
	env, _ := wire.ReadEnvelope(msg)
	if env.Method == "block" {
		select {
		case <-g.release:
		case <-ctx.Done():
		}
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":{}}`)
}

func TestASlowAnswerHoldsNoOtherMessageBack(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g := gate{release: make(chan struct{})}
	ending := make(chan stdio.Ending, 1)
	go func() {
		loop := stdio.Loop{In: inR, Out: wire.NewFrameWriter(outW), Backend: g}
		ending <- loop.Serve(context.Background())
		outW.Close()
	}()
	lines := bufioLines(outR)
	// Each blocked answer hands reading to a new goroutine; the pings
	// behind it are answered while it waits.
	for i := range 5 {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"b`+itoa(i)+`","method":"block"}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"ping"}`+"\n")
		select {
		case l := <-lines:
			if want := `"id":` + itoa(i) + `,`; !strings.Contains(l, want) {
				t.Fatalf("answered %s while %q was blocked, want the ping's answer", l, "b"+itoa(i))
			}
		case <-time.After(wait):
			t.Fatalf("ping %d was not answered while a slow answer was under way", i)
		}
	}
	close(g.release)
	inW.Close()
	blocked := 0
	for l := range lines {
		if strings.Contains(l, `"id":"b`) {
			blocked++
		}
	}
	if blocked != 5 {
		t.Fatalf("%d of 5 slow answers written before the loop ended", blocked)
	}
	if e := <-ending; e != stdio.InputEnded {
		t.Fatalf("ending %q", e)
	}
}

// A local session records what a carried session is made of: the client's
// initialize, the protocol and peer id it got, its last announcement.
func TestALocalSessionCanBeCarried(t *testing.T) {
	f := newFixture()
	out := wire.NewFrameWriter(io.Discard)
	l, err := stdio.NewLocal(context.Background(), f.srv, out, "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if c := l.Carried(); c.Initialize != nil {
		t.Fatalf("carried before initialize: %+v", c)
	}
	l.Handle(context.Background(), json.RawMessage(initialize))
	l.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"fix"}}}`))
	l.Handle(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`))
	c := l.Carried()
	if !strings.Contains(string(c.Initialize), `"clientInfo"`) || c.Protocol == "" || string(c.Announce) != `{"intent":"fix"}` || !c.SafeTools["lookup"] || c.SafeTools["write"] {
		t.Fatalf("carried %+v", c)
	}
}

// An initialize still being answered when the session is carried is
// carried: its client is told the session opened, whatever else the
// session it is carried to would answer (a storm's loaded machine left a
// client answered "tools/call before initialize" by its bridge).
func TestASlowInitializeIsCarried(t *testing.T) {
	f := newFixture()
	entered, release := f.holdInitialize()
	l, err := stdio.NewLocal(context.Background(), f.srv, wire.NewFrameWriter(io.Discard), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go l.Handle(context.Background(), json.RawMessage(initialize))
	<-entered
	carried := make(chan []byte)
	go func() { carried <- l.Carried().Initialize }()
	close(release)
	if c := <-carried; c == nil {
		t.Fatal("the initialize being answered was not carried")
	}
}

// A local session ends with the context it was opened with, closed or
// not: it leaves the server, and its notifications stop.
func TestALocalSessionEndsWithItsContext(t *testing.T) {
	hooks := &server.Hooks{}
	left := make(chan string, 1)
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) { left <- s.SessionID() })
	srv := server.NewMCPServer("t", "1", server.WithHooks(hooks))
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := stdio.NewLocal(ctx, srv, wire.NewFrameWriter(io.Discard), "stdio"); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case id := <-left:
		if id != "stdio" {
			t.Fatalf("session %q left", id)
		}
	case <-time.After(wait):
		t.Fatal("the session outlived its context")
	}
}

// counting answers every message at once, counting them.
type counting struct{ handled *atomic.Int64 }

func (c counting) Handle(_ context.Context, msg json.RawMessage) []byte {
	c.handled.Add(1)
	env, err := wire.ReadEnvelope(msg)
	if err != nil {
		return wire.ErrorFrame(nil, mcp.INVALID_REQUEST, "not a message")
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":{}}`)
}

// A client that writes but does not read its answers is read no further
// once stdio.MaxUnwritten answers wait to be written, and the log says so;
// once it reads, every answer comes. (Each message took a goroutine, its
// answer held in memory, without end: hundreds of MB a minute.)
func TestAClientThatDoesNotReadIsNotReadEither(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe() // read only at the end
	said := make(chan struct{})
	once := sync.OnceFunc(func() { close(said) })
	obs, _ := observer.New(zapcore.WarnLevel)
	log := zap.New(obs, zap.Hooks(func(e zapcore.Entry) error {
		if strings.Contains(e.Message, "does not read its answers") {
			once()
		}
		return nil
	}))
	var handled atomic.Int64
	ending := make(chan stdio.Ending, 1)
	go func() {
		loop := stdio.Loop{In: inR, Out: wire.NewFrameWriter(outW), Backend: counting{&handled}, Logger: log}
		ending <- loop.Serve(context.Background())
		outW.Close()
	}()
	const sent = 3 * stdio.MaxUnwritten
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		for i := range sent { // whatever is answered counts, however it is spelled
			line := []string{`{"jsonrpc":"2.0","id":` + itoa(i) + `,"method":"ping"}`, `{"jsonrpc":"2.0","ID":` + itoa(i) + `,"Method":"ping"}`, `"not a message"`}[i%3]
			io.WriteString(inW, line+"\n")
		}
		inW.Close()
	}()
	select {
	case <-said:
	case <-fed:
		t.Fatalf("all %d messages were read, %d answered, none written", sent, handled.Load())
	case <-time.After(wait):
		t.Fatal("the log never said the client does not read")
	}
	select {
	case <-fed:
		t.Fatal("every message was read though none was answered")
	default:
	}
	if n := handled.Load(); n > stdio.MaxUnwritten+1 { // and the one that waits for a place
		t.Fatalf("%d messages answered, none written, want at most %d", n, stdio.MaxUnwritten+1)
	}
	answers := 0
	for range bufioLines(outR) {
		answers++
	}
	if answers != sent || <-ending != stdio.InputEnded {
		t.Fatalf("%d of %d answers once the client read", answers, sent)
	}
}

// listens holds every subscriptions/listen until its context ends, as a
// 2026-07-28 listen lasts, and answers anything else at once.
type listens struct{}

func (listens) Handle(ctx context.Context, msg json.RawMessage) []byte {
	env, _ := wire.ReadEnvelope(msg)
	if env.Method == string(mcp.MethodSubscriptionsListen) {
		<-ctx.Done()
	}
	return []byte(`{"jsonrpc":"2.0","id":` + string(env.ID) + `,"result":{}}`)
}

// Listens, which last until stdin ends, take no place among the answers
// waiting to be written: more listens than stdio.MaxUnwritten leave
// a ping answered and the end of stdin heard. (The listens took every
// place, and the loop read nothing more, its end included.)
func TestListensBeyondTheBoundStillHearTheEnd(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ending := make(chan stdio.Ending, 1)
	go func() {
		loop := stdio.Loop{In: inR, Out: wire.NewFrameWriter(outW), Backend: listens{}}
		ending <- loop.Serve(context.Background())
		outW.Close()
	}()
	lines := bufioLines(outR)
	go func() {
		for i := range stdio.MaxUnwritten + 1 {
			io.WriteString(inW, `{"jsonrpc":"2.0","id":`+itoa(i)+`,"method":"subscriptions/listen","params":{}}`+"\n")
		}
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"last","method":"ping"}`+"\n")
	}()
	select {
	case l := <-lines:
		if !strings.Contains(l, `"id":"last"`) {
			t.Fatalf("answered %s, want the ping", l)
		}
	case <-time.After(wait):
		t.Fatal("the ping behind the listens was never answered")
	}
	inW.Close()
	select {
	case e := <-ending:
		if e != stdio.InputEnded {
			t.Fatalf("the loop ended: %s", e)
		}
	case <-time.After(wait):
		t.Fatal("the end of stdin was never heard")
	}
}
