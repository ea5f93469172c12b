package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"majordomus-mcp/example"
	"majordomus-mcp/internal/testtemp"
	"majordomus-mcp/layer"
	"majordomus-mcp/machine"
)

// wait caps every wait on an event in these tests.
const wait = 10 * time.Second

// board is one checkout's lease, in memory: the fake at the node's Lease
// port. Each node sees it through a view of its own (its instance), so
// several nodes in one test process elect, hold, publish and lose it as
// processes would the lease file. forced observations, when queued, are
// what the next attempts find instead.
type board struct {
	mu       sync.Mutex
	holder   string // the instance holding the lease, "" when none
	url      string
	forced   []machine.Observation
	changed  chan struct{} // closed and replaced on every change
	attempts chan string   // each attempt's instance, when a test listens
	gate     chan struct{} // when set, a winning attempt waits for it
}

func newBoard() *board { return &board{changed: make(chan struct{})} }

// force makes the next attempts find obs, in order.
func (b *board) force(obs ...machine.Observation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forced = append(b.forced, obs...)
}

func (b *board) changeLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *board) holding() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.holder
}

// view is one node's Lease over the board.
type view struct {
	b  *board
	me string
}

func (v *view) Path() string { return "/board/" + v.me }

func (v *view) Attempt(ctx context.Context) machine.Observation {
	b := v.b
	b.mu.Lock()
	if b.attempts != nil {
		b.attempts <- v.me
	}
	if len(b.forced) > 0 {
		obs := b.forced[0]
		b.forced = b.forced[1:]
		b.mu.Unlock()
		return obs
	}
	switch {
	case b.holder == "":
		b.holder, b.url = v.me, ""
		b.changeLocked()
		gate := b.gate
		b.mu.Unlock()
		if gate != nil {
			<-gate // a slow link: it reports won whatever became of ctx
		}
		return machine.Observation{Class: machine.ClassWon}
	case b.url != "":
		defer b.mu.Unlock()
		return machine.Observation{Class: machine.ClassLive, URL: b.url, Reason: "held by " + b.holder}
	}
	b.mu.Unlock()
	return machine.Observation{Class: machine.ClassBinding, Reason: "no URL yet"}
}

func (v *view) TakeOver(context.Context, machine.Observation) error {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	v.b.holder, v.b.url = "", ""
	v.b.changeLocked()
	return nil
}

func (v *view) Release(context.Context) error {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	if v.b.holder == v.me {
		v.b.holder, v.b.url = "", ""
		v.b.changeLocked()
	}
	return nil
}

func (v *view) Watch(ctx context.Context) (<-chan struct{}, error) {
	out := make(chan struct{})
	go func() {
		defer close(out)
		for {
			v.b.mu.Lock()
			changed := v.b.changed
			v.b.mu.Unlock()
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
			select {
			case out <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}

func (v *view) Holding() (string, bool) {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	return v.me, v.b.holder == v.me
}

func (v *view) Publish(url string) error {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	if v.b.holder != v.me {
		return fmt.Errorf("%s does not hold the lease", v.me)
	}
	v.b.url = url
	v.b.changeLocked()
	return nil
}

func (v *view) Lost(ctx context.Context, instance string) (<-chan string, error) {
	lost := make(chan string, 1)
	go func() {
		for {
			v.b.mu.Lock()
			holder, changed := v.b.holder, v.b.changed
			v.b.mu.Unlock()
			if holder != instance {
				lost <- "the lease went to " + fmt.Sprintf("%q", holder)
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return lost, nil
}

func (v *view) CurrentURL() string {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	return v.b.url
}

// exampleCheckout writes the example checkout and describes it for the
// default profile, with a runtime registry of the test's own.
func exampleCheckout(t *testing.T) *Checkout {
	t.Helper()
	dir := testtemp.Dir(t)
	root := filepath.Join(dir, "example")
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	m, err := layer.LoadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	return &Checkout{Root: root, Manifest: m, Profile: "default", Registry: filepath.Join(dir, "registry.db"), Logger: zap.NewNop()}
}

// running is a node under test with its stdio client.
type running struct {
	t      *testing.T
	name   string
	node   *Node
	client *client
	logs   logTap
	done   chan result
}

type result struct {
	outcome machine.Outcome
	err     error
}

// start runs a node named name on co, electing on b; withClient gives it a
// stdio client.
func start(t *testing.T, name string, co *Checkout, b *board, withClient bool) *running {
	t.Helper()
	logs := newLogTap()
	r := &running{t: t, name: name, logs: logs, done: make(chan result, 1)}
	cfg := Config{
		Checkout: co,
		Times:    Timings{ElectionBound: wait, BusyGrace: time.Second, IdleTimeout: time.Minute, Heartbeat: time.Minute},
		HTTPHost: "127.0.0.1",
		Lease:    &view{b: b, me: name},
		Logger:   zap.New(logs).Named(name),
	}
	if withClient {
		r.client = newClient(t, name)
		cfg.Stdin, cfg.Stdout = r.client.stdin, r.client.stdout
	}
	n, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.node = n
	go func() {
		outcome, err := n.Run(context.Background())
		r.done <- result{outcome, err}
	}()
	t.Cleanup(func() {
		n.Signal("test over")
		r.wait()
		if r.client != nil {
			r.client.close()
		}
	})
	return r
}

// wait returns how the node ended, once it has.
func (r *running) wait() result {
	r.t.Helper()
	select {
	case res := <-r.done:
		r.done <- res // for the next reader
		return res
	case <-time.After(wait):
		r.t.Fatalf("%s: the node did not end; it is %s", r.name, r.node.State())
		return result{}
	}
}

// awaitState waits for the node to enter s.
func (r *running) awaitState(s machine.State) {
	r.t.Helper()
	r.awaitLog(`"to":"` + string(s) + `"`)
}

// awaitLog waits for a log line whose message or fields contain text.
func (r *running) awaitLog(text string) {
	r.t.Helper()
	timeout := time.After(wait)
	for {
		changed := r.logs.changed()
		for _, line := range r.logs.lines() {
			if strings.Contains(line, text) {
				return
			}
		}
		select {
		case <-changed:
		case <-timeout:
			r.t.Fatalf("%s: no log line says %s; the node is %s; its log:\n%s", r.name, text, r.node.State(), strings.Join(r.logs.lines(), "\n"))
		}
	}
}

// logTap keeps a node's log lines as JSON and says when one is added.
type logTap struct {
	zapcore.Core
	mu    *sync.Mutex
	all   *[]string
	added *chan struct{}
}

func newLogTap() logTap {
	added := make(chan struct{})
	return logTap{Core: zapcore.NewNopCore(), mu: &sync.Mutex{}, all: &[]string{}, added: &added}
}

func (l logTap) Enabled(zapcore.Level) bool { return true }

func (l logTap) With(fields []zapcore.Field) zapcore.Core { return l } // the tests log no With fields

func (l logTap) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	return ce.AddCore(ent, l)
}

func (l logTap) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	enc.Fields["msg"] = ent.Message
	line, _ := json.Marshal(enc.Fields)
	l.mu.Lock()
	defer l.mu.Unlock()
	*l.all = append(*l.all, string(line))
	close(*l.added)
	*l.added = make(chan struct{})
	return nil
}

func (l logTap) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), *l.all...)
}

func (l logTap) changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return *l.added
}

// client is an MCP client on a node's stdio.
type client struct {
	t      *testing.T
	name   string
	stdin  *io.PipeReader
	in     *io.PipeWriter
	stdout *io.PipeWriter
	frames chan map[string]any
	nextID int
}

func newClient(t *testing.T, name string) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, name: name, stdin: inR, in: inW, stdout: outW, frames: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var f map[string]any
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				c.frames <- f
			}
		}
	}()
	return c
}

// send writes one message.
func (c *client) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	line, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("%s: writing to the node: %v", c.name, err)
	}
}

// call sends a request and returns its answer; what comes before it is
// kept in notes.
func (c *client) call(method string, params any, notes *[]map[string]any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := float64(c.nextID)
	c.send(map[string]any{"id": id, "method": method, "params": params})
	timeout := time.After(wait)
	for {
		select {
		case f := <-c.frames:
			if f["id"] == id && f["method"] == nil {
				return f
			}
			if notes != nil {
				*notes = append(*notes, f)
			}
		case <-timeout:
			c.t.Fatalf("%s: no answer to %s", c.name, method)
		}
	}
}

// initialize opens the client's session, announcing itself as name.
func (c *client) initialize() {
	c.t.Helper()
	a := c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": c.name, "version": "1"},
	}, nil)
	if a["result"] == nil {
		c.t.Fatalf("%s: initialize answered %v", c.name, a)
	}
	c.send(map[string]any{"method": "notifications/initialized"})
}

// tool calls a tool and returns its text, failing the test on an error.
func (c *client) tool(name string, args map[string]any, notes *[]map[string]any) string {
	c.t.Helper()
	a := c.call("tools/call", map[string]any{"name": name, "arguments": args}, notes)
	res, _ := a["result"].(map[string]any)
	if res == nil || res["isError"] == true {
		c.t.Fatalf("%s: %s answered %v", c.name, name, a)
	}
	content, _ := res["content"].([]any)
	var text strings.Builder
	for _, item := range content {
		if m, ok := item.(map[string]any); ok {
			text.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return text.String()
}

// awaitNote waits for a notifications/message saying text: among notes
// (what came before an answer), or still to come.
func (c *client) awaitNote(notes []map[string]any, text string) {
	c.t.Helper()
	if told(notes, text) {
		return
	}
	timeout := time.After(wait)
	for {
		select {
		case f := <-c.frames:
			if told([]map[string]any{f}, text) {
				return
			}
			notes = append(notes, f)
		case <-timeout:
			c.t.Fatalf("%s: never told %q; it got %v", c.name, text, notes)
		}
	}
}

func (c *client) close() {
	_ = c.in.Close()
	_ = c.stdout.Close()
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// fresh is the same checkout as another process would see it: nothing
// loaded yet.
func (co *Checkout) fresh() *Checkout {
	return &Checkout{Root: co.Root, Manifest: co.Manifest, Profile: co.Profile, Strict: co.Strict, Registry: co.Registry, Logger: co.Logger}
}
