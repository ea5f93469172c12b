package surface

import (
	"context"
	"errors"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// A call that runs as its peer, numbered while the checkout's counter
// failed, is numbered anew (Keep) is recorded under the new id, as the
// calls recorded before it are relabelled: never under the id the peer
// gave up, which the checkout may give another.
func TestACallRunningAsItsPeerIsNumberedAnewIsRecordedUnderTheNewID(t *testing.T) {
	counting := false
	running, finish := make(chan struct{}), make(chan struct{})
	f := newFixtureOf(t, layer.Config{}, func(c *Config) {
		c.PeerNumbers = func(atLeast int) (int, error) {
			if !counting {
				return 0, errors.New("the counter cannot be used")
			}
			return max(41, atLeast), nil
		}
		c.Fleet = func(context.Context) (any, error) {
			close(running)
			<-finish
			return map[string]any{}, nil
		}
	})
	c := f.connect("codex")
	if id := f.s.Board.PeerID(c.sess.SessionID()); id != "p1" {
		t.Fatalf("numbered alone as %q", id)
	}
	answered := make(chan string, 1)
	go func() {
		_, errText := c.tool("majordomus_fleet_inventory", nil)
		answered <- errText
	}()
	<-running
	counting = true
	f.s.Keep(State{}, func([]byte) {})
	close(finish)
	if errText := <-answered; errText != "" {
		t.Fatal(errText)
	}
	id := f.s.Board.PeerID(c.sess.SessionID())
	if got := f.s.Executions.Recent(1); id != "p41" || len(got) != 1 || got[0].Peer != id {
		t.Fatalf("the client is %s now; its call was recorded as %+v", id, got)
	}
}
