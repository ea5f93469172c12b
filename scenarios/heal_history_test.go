//go:build unix

package scenarios

import (
	"bytes"
	"os"
	"slices"
	"syscall"
	"testing"
)

// A client served alone announced and made 900 calls; the server it
// rejoins is killed -9 as it takes them in, having given the client an id
// and journaled, under it, the client's announcement and some of its
// calls. Then the client's own process takes the lease over, or another
// client does and the client joins it: either way every call it made
// alone is in the history once, and its announcement on the board once,
// all under the one id it is, which it is told.
func TestAServerKilledAsItTakesAClientsCallsInLeavesThemTheClients(t *testing.T) {
	for _, who := range []string{"the client", "another client"} {
		t.Run(who+" takes over", func(t *testing.T) {
			dir := checkout(t)
			c, usable := aloneFromTheStart(t, dir)
			if isErr, text, _ := c.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "alone, then shared", "scope": []string{"docs"}}, nil); isErr {
				t.Fatal(text)
			}
			const made = 900 // enough that taking them in is under way when the kill comes
			for range made {
				call(t, c, "majordomus_search", map[string]any{"query": "rule"})
			}
			before := peersOf(t, c).Caller
			d := leaseholderUnder(t, dir, usable, before)
			journaled(t, dir, "majordomus_search") // the kill comes as the first of them is journaled
			if err := d.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if who == "another client" { // it takes the lease over long before the client tries again
				e := shared(t, dir)
				initialize(t, e, "gemini-cli")
				serverURL(t, e)
			}
			if _, err := c.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
				t.Fatal(err)
			}
			board, by := peersOf(t, c), map[string]int{}
			for _, x := range executionsOf(t, c) {
				if x.Tool == "majordomus_search" {
					by[x.Peer]++
				}
			}
			if by[board.Caller] != made || len(by) != 1 {
				t.Errorf("the client is %s; its %d calls made alone are in the history as %v", board.Caller, made, by)
			}
			var announced []string
			for _, p := range board.Peers {
				if p.Announcement != nil && p.Announcement.Intent == "alone, then shared" {
					announced = append(announced, p.ID)
				}
			}
			if !slices.Equal(announced, []string{board.Caller}) {
				t.Errorf("the client is %s; its announcement is on the board as %q", board.Caller, announced)
			}
			want := "it is peer " + board.Caller + " there, not " + before
			if _, err := c.WaitFrame(ctx(t), "a notifications/message with its new id", func(f []byte) bool {
				return bytes.Contains(f, []byte(`"method":"notifications/message"`)) && bytes.Contains(f, []byte(want))
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// journaled waits until the checkout's shared state in dir holds a call of
// tool: a server is taking a client's calls in.
func journaled(t *testing.T, dir, tool string) {
	t.Helper()
	for waiting := ctx(t); ; {
		state, err := os.ReadFile(statePath(dir))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(state, []byte(`"tool":"`+tool+`"`)) {
			return
		}
		if waiting.Err() != nil {
			t.Fatalf("no call of %s reached the state", tool)
		}
	}
}
