//go:build unix

package scenarios

import (
	"bytes"
	"os"
	"syscall"
	"testing"
)

// A client served alone rejoins a server that is killed -9 as it takes the
// client's calls in, some of them journaled under the id that server gave
// the client; the client then takes the lease over under another id. Every
// call it made alone is in the history once, under the one id it is told:
// those the killed server kept are the client's too.
func TestAServerKilledAsItTakesAClientsCallsInLeavesThemTheClients(t *testing.T) {
	dir := checkout(t)
	c, usable := aloneFromTheStart(t, dir)
	const made = 900 // enough that taking them in is under way when the kill comes
	for range made {
		call(t, c, "majordomus_search", map[string]any{"query": "rule"})
	}
	d := leaseholderUnder(t, dir, usable, peersOf(t, c).Caller)
	search, waiting := []byte(`"tool":"majordomus_search"`), ctx(t)
	for { // the kill comes as the first of them is journaled
		state, err := os.ReadFile(statePath(dir))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(state, search) {
			break
		}
		if waiting.Err() != nil {
			t.Fatal("the client's calls never reached the state")
		}
	}
	if err := d.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitLogAny(ctx(t), "joined the checkout's shared server", "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	id, by := peersOf(t, c).Caller, map[string]int{}
	for _, x := range executionsOf(t, c) {
		if x.Tool == "majordomus_search" {
			by[x.Peer]++
		}
	}
	if by[id] != made || len(by) != 1 {
		t.Fatalf("the client is %s; its %d calls made alone are in the history as %v", id, made, by)
	}
}
