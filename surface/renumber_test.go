package surface

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// A call that runs as its peer, numbered while the checkout's counter
// failed, is numbered anew (Keep) is recorded, and journaled, under the new
// id, as the calls recorded before it are relabelled, also when its
// session leaves before it ends: never under the id the peer gave up,
// which the checkout may give another.
func TestACallRunningAsItsPeerIsNumberedAnewIsRecordedUnderTheNewID(t *testing.T) {
	for _, leaves := range []bool{false, true} {
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
		var journaled []Execution
		f.s.Keep(State{}, func(line []byte) bool {
			var r record
			if json.Unmarshal(line, &r) == nil && r.Execution != nil {
				journaled = append(journaled, *r.Execution)
			}
			return true
		})
		id := f.s.Board.PeerID(c.sess.SessionID())
		if leaves {
			c.leave()
		}
		close(finish)
		if errText := <-answered; errText != "" {
			t.Fatal(errText)
		}
		got := f.s.Executions.Recent(1)
		if id != "p41" || len(got) != 1 || got[0].Peer != id || len(journaled) != 1 || journaled[0].Peer != id {
			t.Fatalf("leaving %v: the client is %s now; its call was recorded as %+v, journaled as %+v", leaves, id, got, journaled)
		}
	}
}
