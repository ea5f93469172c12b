package surface

import (
	"testing"
	"time"
)

// Every change of what the page shows moves the generation and closes the
// channel handed out before it: an attachment, an announcement, a call
// recorded, a silent peer taken for gone (found by Changes itself). A
// reading changes nothing.
func TestTheSurfaceCountsItsChanges(t *testing.T) {
	f, clk := newClockedFixture(t)
	gen, next := f.s.Changes()
	if again, _ := f.s.Changes(); again != gen {
		t.Fatalf("a reading moved the generation from %d to %d", gen, again)
	}
	changed := func(what string) {
		t.Helper()
		select {
		case <-next:
		default:
			t.Fatalf("%s closed no channel", what)
		}
		now, n := f.s.Changes()
		if now == gen {
			t.Fatalf("%s left the generation at %d", what, gen)
		}
		gen, next = now, n
	}
	legacy := f.connect("codex")
	changed("an attachment")
	announce(t, legacy.tool, "lib", "lib")
	changed("an announcement and its call")
	if _, err := f.s.PeersJSON(); err != nil {
		t.Fatal(err)
	}
	if now, _ := f.s.Changes(); now != gen {
		t.Fatalf("reading the peers moved the generation to %d", now)
	}
	f.modern("claude-code", nil).rpc("tools/list", nil)
	changed("a modern peer sighted")
	clk.advance(testIdle)
	f.s.Changes()
	changed("a silent peer gone")
	f.s.Executions.Record(Execution{Tool: "majordomus_list", At: time.Now()})
	changed("a call recorded")
}
