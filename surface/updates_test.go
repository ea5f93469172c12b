package surface

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
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
