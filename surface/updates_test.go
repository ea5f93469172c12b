package surface

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// More subscribed objects changing at once (a checkout switched) than
// mcp-go queues for a session: a client that reads hears of every one, and
// one that reads nothing holds a rebuild back only once, for a moment, its
// loss said in the log; the rebuilds after drop its updates at once.
func TestEveryUpdateOfABurstReachesAClientThatReads(t *testing.T) {
	const objects = 150 // mcp-go queues 100 notifications a session
	write := func(root, body string) {
		for i := range objects {
			p := filepath.Join(root, ".ai/repo/knowledge", fmt.Sprintf("k%03d.md", i))
			if err := os.WriteFile(p, fmt.Appendf(nil, "---\nid: k%03d\nkind: knowledge\ntitle: K\n---\n%s\n", i, body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	root := testtemp.Dir(t)
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	write(root, "one")
	core, logs := observer.New(zap.DebugLevel)
	f := newFixtureOf(t, layer.Config{Root: root}, func(c *Config) { c.Logger = zap.New(core) })
	reads, deaf := f.connect("claude-code"), f.connect("codex")
	for i := range objects {
		for _, c := range []*client{reads, deaf} {
			c.rpc("resources/subscribe", map[string]any{"uri": fmt.Sprintf("majordomus://knowledge/k%03d", i)})
		}
	}
	drain(reads.sess)
	drain(deaf.sess)

	lost := func(c *client) *observer.ObservedLogs {
		return logs.FilterMessageSnippet("reads no notifications").FilterField(zap.String("session", c.sess.SessionID()))
	}
	old := f.lay.Current()
	for round, body := range []string{"two", "three"} {
		heard := make(chan int)
		go func() {
			queue := reads.sess.ClientNotifications()
			for len(queue) < cap(queue) {
				runtime.Gosched() // this client reads only once its queue is full
			}
			n := 0
			for note := range queue {
				if note.Method == mcp.MethodNotificationResourceUpdated {
					if n++; n == objects {
						heard <- n
						return
					}
				}
			}
		}()
		write(root, body)
		ix, err := layer.Build(root, old.Generation+1)
		if err != nil {
			t.Fatal(err)
		}
		f.s.IndexChanged(old, ix)
		old = ix
		select {
		case <-heard:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: a client that reads did not hear of all %d objects changed; log: %v", round, objects, logs.All())
		}
		if warned, said := lost(deaf).FilterLevelExact(zap.WarnLevel).Len(), lost(deaf).Len(); warned != 1 || said != round+1 {
			t.Errorf("round %d: the loss of the session that reads nothing is warned of %d times and said %d times; want once, and once a round", round, warned, said)
		}
		if lost(reads).Len() != 0 {
			t.Errorf("round %d: the session that reads is said to lose updates: %v", round, logs.All())
		}
	}
}

// The same burst reaches a 2026-07-28 client through its listen stream,
// which subscribed to every object: one that reads hears of every one, as
// a session does; one that reads nothing holds the rebuild back only until
// it is taken for deaf.
func TestEveryUpdateOfABurstReachesAListenThatReads(t *testing.T) {
	const objects = 150 // mcp-go queues 100 notifications a session
	root := testtemp.Dir(t)
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	write := func(body string) {
		for i := range objects {
			p := filepath.Join(root, ".ai/repo/knowledge", fmt.Sprintf("k%03d.md", i))
			if err := os.WriteFile(p, fmt.Appendf(nil, "---\nid: k%03d\nkind: knowledge\ntitle: K\n---\n%s\n", i, body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("one")
	core, logs := observer.New(zap.DebugLevel)
	f := newFixtureOf(t, layer.Config{Root: root}, func(c *Config) { c.Logger = zap.New(core) })
	var uris []any
	for i := range objects {
		uris = append(uris, fmt.Sprintf("majordomus://knowledge/k%03d", i))
	}
	reads := f.modern("codex", nil).listenTo(uris, nil, "listen")
	// one client's three listens that read nothing, on one queue: taken for
	// deaf once, as its queue is, not once each
	deaf := server.NewInProcessSession("", nil)
	for _, id := range []string{"a", "b", "c"} {
		f.modern("gemini", nil).listenTo(uris, deaf, id)
	}
	// This client is slower than the server: it takes one notification
	// only when its queue is full, until the rebuild is over; on one
	// processor, it runs only while the server waits.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rebuilt, heard := make(chan struct{}), make(chan int, 1)
	go func() {
		queue, n := reads.ClientNotifications(), 0
		for {
			for len(queue) < cap(queue) {
				select {
				case <-rebuilt:
					for len(queue) > 0 {
						if (<-queue).Method == mcp.MethodNotificationResourceUpdated {
							n++
						}
					}
					heard <- n
					return
				default:
					runtime.Gosched()
				}
			}
			if (<-queue).Method == mcp.MethodNotificationResourceUpdated {
				n++
			}
		}
	}()
	old := f.lay.Current()
	write("two")
	ix, err := layer.Build(root, old.Generation+1)
	if err != nil {
		t.Fatal(err)
	}
	f.s.IndexChanged(old, ix)
	close(rebuilt)
	if n := <-heard; n != objects {
		t.Fatalf("a listen that reads heard of %d of the %d objects changed", n, objects)
	}
	if n := len(deaf.ClientNotifications()); n != cap(deaf.ClientNotifications()) {
		t.Errorf("the listens that read nothing hold %d notifications; want their queue full", n)
	}
	if n := logs.FilterMessageSnippet("reads no notifications").FilterLevelExact(zap.WarnLevel).Len(); n != 1 {
		t.Errorf("the client whose listens read nothing is warned of %d times; want once", n)
	}
}

// listenTo opens a subscriptions/listen stream of id subscribed to uris,
// on sess (nil: a session of its own, as over HTTP), open until the test
// ends; it returns the stream's session once mcp-go has acknowledged it.
func (m *modernClient) listenTo(uris []any, sess *server.InProcessSession, id string) *server.InProcessSession {
	m.f.t.Helper()
	if sess == nil {
		sess = server.NewInProcessSession("", nil)
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}, "_meta": m.meta()}})
	ctx, cancel := context.WithCancel(m.f.s.MCP.WithContext(context.Background(), sess))
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		m.f.s.MCP.HandleMessage(ctx, msg)
	}()
	m.f.t.Cleanup(func() {
		cancel()
		<-answered
	})
	if n := <-sess.ClientNotifications(); n.Method != mcp.MethodNotificationSubscriptionsAcknowledged {
		m.f.t.Fatalf("the listen stream began with %s", n.Method)
	}
	return sess
}

// A subscription carried from another server (a take-over replays what its
// client asked to hear there) is kept though its object is not in the
// index now — a branch without it checked out as the take-over came — as
// the server it comes from kept it: when the object is back on disk, its
// client is told, as it would have been had no take-over come between.
func TestACarriedSubscriptionHearsItsObjectComeBack(t *testing.T) {
	root := testtemp.Dir(t)
	if err := example.WriteCheckout(root); err != nil {
		t.Fatal(err)
	}
	const uri = "majordomus://prompt/review"
	path := filepath.Join(root, ".ai/repo/prompts/review.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	f := newFixtureOf(t, layer.Config{Root: root})
	ctx, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = f.lay.Watch(ctx, f.s.IndexChanged)
	}()
	t.Cleanup(func() { stop(); <-watched })
	c := f.connect("codex")
	c.carry("resources/subscribe", map[string]any{"uri": uri})

	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case n := <-c.sess.ClientNotifications():
			if n.Method == mcp.MethodNotificationResourceUpdated && n.Params.AdditionalFields["uri"] == uri {
				return
			}
		case <-deadline:
			t.Fatalf("%s is back on disk, but its carried subscriber was not told", uri)
		}
	}
}

// A resource read while the layer publishes the index that removed its
// object — the layer serves the new index before the surface has heard of
// it, and the resource is still listed — answers the object as listed,
// never -32603, MCP's code for a fault of the server.
func TestAReadWhileItsObjectIsRemovedIsNoInternalError(t *testing.T) {
	f := newFixture(t)
	const uri = "majordomus://prompt/review"
	published, release := make(chan struct{}), make(chan struct{})
	ctx, stop := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		_ = f.lay.Watch(ctx, func(old, new *layer.Index) {
			if _, ok := new.Lookup(uri); !ok {
				close(published)
				<-release
			}
			f.s.IndexChanged(old, new)
		})
	}()
	t.Cleanup(func() { stop(); <-watched })
	c := f.connect("codex")
	if err := os.Remove(filepath.Join(f.root, ".ai/repo/prompts/review.md")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-published:
	case <-time.After(30 * time.Second):
		t.Fatal("the layer did not rebuild without the prompt")
	}
	result, code, message := c.call("resources/read", map[string]any{"uri": uri})
	close(release)
	if code == mcp.INTERNAL_ERROR {
		t.Fatalf("resources/read of %s as it is removed: %d %s", uri, code, message)
	}
	var read struct{ Contents []mcp.TextResourceContents }
	mustDecode(t, result, &read)
	if len(read.Contents) != 1 || read.Contents[0].URI != uri || !strings.Contains(read.Contents[0].Text, `"id":"review"`) {
		t.Fatalf("resources/read of %s as it is removed: %s", uri, result)
	}
}

// A layer that goes on past the generation a carried client was told
// elsewhere changes what the repository and the server resources say:
// their subscribers are told, as they are of a rebuild.
func TestSubscribersHearTheGenerationGoOnForACarriedClient(t *testing.T) {
	f := newFixture(t)
	sub := f.connect("claude-code")
	sub.rpc("resources/subscribe", map[string]any{"uri": repositoryURI})
	drain(sub.sess)
	carried := f.connect("codex")
	carried.carry("tools/call", map[string]any{"name": "majordomus_executions", "_meta": map[string]any{HistoryMeta: []any{}, GenerationMeta: 5}})
	if g := f.lay.Current().Generation; g != 6 {
		t.Fatalf("the layer is at generation %d after a client told 5 came; want 6", g)
	}
	if got := drain(sub.sess); !got[string(mcp.MethodNotificationResourceUpdated)] {
		t.Fatalf("the generation went on to 6, and a subscriber of %s heard %v", repositoryURI, got)
	}
}
