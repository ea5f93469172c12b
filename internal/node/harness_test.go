package node

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
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
	path     string        // the lease file: its holder's instance, none when no one holds it
	publish  func()        // when set, run as a node publishes its URL, before it is written
}

// newBoard is a lease at a path of its own, which the board writes as
// the lease file a holder would, so that the shared state beside it is
// written and read as in a checkout.
func newBoard(t *testing.T) *board {
	return &board{changed: make(chan struct{}), path: filepath.Join(testtemp.Dir(t), "server.json")}
}

// force makes the next attempts find obs, in order.
func (b *board) force(obs ...machine.Observation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forced = append(b.forced, obs...)
}

// set makes the lease name holder at url, as a change on disk.
func (b *board) set(holder, url string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.holder, b.url = holder, url
	b.changeLocked()
}

func (b *board) changeLocked() {
	if b.holder == "" {
		_ = os.Remove(b.path)
	} else {
		_ = os.WriteFile(b.path, fmt.Appendf(nil, `{"schema":%q,"instance":%q}`, registry.Schema, b.holder), 0o600)
	}
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
	b      *board
	me     string
	paused atomic.Pointer[chan struct{}] // when set, attempts wait for it to close
	won    atomic.Bool                   // it created the lease, as far as it knows (the file handle's view)
	// asked, when set, runs once as the lease is next asked (Carries).
	asked atomic.Pointer[func()]
}

// pause makes this node's attempts wait until the returned func is called.
func (v *view) pause() (resume func()) {
	ch := make(chan struct{})
	v.paused.Store(&ch)
	return func() { close(ch) }
}

func (v *view) Path() string { return v.b.path }

func (v *view) Attempt(ctx context.Context) machine.Observation {
	if p := v.paused.Load(); p != nil {
		select {
		case <-*p:
		case <-ctx.Done():
			return machine.Observation{Class: machine.ClassUnusable, Reason: "the election was cancelled"}
		}
	}
	b := v.b
	b.mu.Lock()
	if b.attempts != nil {
		b.attempts <- v.me
	}
	if len(b.forced) > 0 {
		obs := b.forced[0]
		b.forced = b.forced[1:]
		b.mu.Unlock()
		if obs.Class == machine.ClassWon {
			v.won.Store(true) // as its file handle saw it, whoever the board names now
		}
		return obs
	}
	switch {
	case b.holder == "":
		b.holder, b.url = v.me, ""
		v.won.Store(true)
		b.changeLocked()
		gate := b.gate
		b.mu.Unlock()
		if gate != nil {
			<-gate // a slow link: it reports won whatever became of ctx
		}
		return machine.Observation{Class: machine.ClassWon}
	case b.url != "":
		defer b.mu.Unlock()
		return machine.Observation{Class: machine.ClassLive, URL: b.url, Reason: "held by " + b.holder, Opaque: held{b.holder, keyOf(b.holder)}}
	}
	b.mu.Unlock()
	return machine.Observation{Class: machine.ClassBinding, Reason: "no URL yet"}
}

func (v *view) TakeOver(context.Context, machine.Observation) (bool, error) {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	v.b.holder, v.b.url = "", ""
	v.b.changeLocked()
	return true, nil
}

func (v *view) Release(context.Context) error {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	if v.b.holder == v.me {
		v.b.holder, v.b.url = "", ""
		v.b.changeLocked()
	}
	v.won.Store(false)
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

func (v *view) Self() (registry.Identity, error) { return registry.Self() }

func (v *view) Holding() (string, string, bool) { return v.me, keyOf(v.me), v.won.Load() }

// held is what a live observation read of the lease, as a lease file's
// observation keeps it: not looked up by URL later, for a port is reused
// from one test to the next.
type held struct{ instance, key string }

// Key is the holder a live observation names, and its secret.
func (v *view) Key(live machine.Observation) (string, string, net.Conn) {
	h, _ := live.Opaque.(held)
	return h.instance, h.key, nil
}

// keyAt is the secret of the server published at url.
func keyAt(url string) string {
	keys.mu.Lock()
	instance := keys.at[url]
	keys.mu.Unlock()
	return keyOf(instance)
}

// keyOf is the secret of the lease instance holds: one per instance, as a
// lease file's is.
func keyOf(instance string) string {
	keys.mu.Lock()
	defer keys.mu.Unlock()
	if keys.of[instance] == "" {
		keys.of[instance] = secret.New()
	}
	return keys.of[instance]
}

var keys = struct {
	mu sync.Mutex
	of map[string]string // by instance
	at map[string]string // instance by published URL
}{of: map[string]string{}, at: map[string]string{}}

func (v *view) Publish(url string) error {
	v.b.mu.Lock()
	publish := v.b.publish
	v.b.mu.Unlock()
	if publish != nil {
		publish()
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	if v.b.holder != v.me {
		return fmt.Errorf("%w: %s does not hold the lease", registry.ErrLeaseNotOurs, v.me)
	}
	v.b.url = url
	v.b.changeLocked()
	keys.mu.Lock()
	keys.at[url] = v.me
	keys.mu.Unlock()
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

func (v *view) Carries(instance string) (bool, string) {
	if f := v.asked.Swap(nil); f != nil {
		(*f)()
	}
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	if v.b.holder != instance {
		return false, "the lease went to " + fmt.Sprintf("%q", v.b.holder)
	}
	return true, ""
}

func (v *view) Ending(machine.Observation) bool { return false }

func (v *view) Forget() { v.won.Store(false) }

func (v *view) CurrentURL() string {
	v.b.mu.Lock()
	defer v.b.mu.Unlock()
	return v.b.url
}

// exampleCheckout writes the example checkout and describes it for the
// default profile, with a runtime registry of the test's own.
func exampleCheckout(t testing.TB) *Checkout {
	t.Helper()
	dir := testtemp.Dir(t)
	root := filepath.Join(dir, "example")
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(registry.Path(root, "default")), 0o700); err != nil { // the lease directory, for the peer counter
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
	lease  *view
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
	return startWith(t, name, co, b, withClient, func(*Config) {})
}

// startWith is start with the node's config changed by tune first.
func startWith(t *testing.T, name string, co *Checkout, b *board, withClient bool, tune func(*Config)) *running {
	t.Helper()
	logs := newLogTap()
	r := &running{t: t, name: name, logs: logs, lease: &view{b: b, me: name}, done: make(chan result, 1)}
	cfg := Config{
		Checkout: co,
		Times:    Timings{ElectionBound: wait, BusyGrace: 4 * time.Second, ProbeTimeout: 3 * time.Second, IdleTimeout: 2 * time.Minute, Heartbeat: time.Minute},
		HTTPHost: "127.0.0.1",
		Lease:    r.lease,
		Logger:   zap.New(logs).Named(name),
	}
	if withClient {
		r.client = newClient(t, name)
		cfg.Stdin, cfg.Stdout = r.client.stdin, r.client.stdout
	}
	tune(&cfg)
	r.run(cfg)
	return r
}

// run makes r's node of cfg and runs it until the test ends, when it is
// signalled and waited for (its client, if any, closed after).
func (r *running) run(cfg Config) {
	r.t.Helper()
	n, err := New(cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	r.node = n
	go func() {
		outcome, err := n.Run(context.Background())
		r.done <- result{outcome, err}
	}()
	r.t.Cleanup(func() {
		n.Signal("test over")
		r.wait()
		if r.client != nil {
			r.client.close()
		}
	})
}

// servingAndAttached starts node a, which serves, and node c, attached to
// it with its client initialized; id is c's peer id.
func servingAndAttached(t *testing.T, co *Checkout, b *board) (a, c *running, id string) {
	t.Helper()
	a = start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	// c tries to share again only when the test elects for it: a retry
	// a second after it went alone, on a loaded machine, would find a's
	// lease before a released it, and serve c otherwise than the test says
	c = startWith(t, "c", co.fresh(), b, true, func(cfg *Config) { cfg.Times.JoinRetry = time.Hour })
	id = c.client.initialize()
	c.awaitState(machine.Attached)
	return a, c, id
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
