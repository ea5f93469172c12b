//go:build unix

package scenarios

import (
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A client speaking both revisions stays one peer when its server is
// killed and it re-attaches elsewhere, whichever revision it spoke first:
// the session it opened is opened again under its peer id, and nothing
// its bridge holds for it there (its presence) is a second peer of its
// name.
func TestAClientMixingRevisionsIsOnePeerAfterATakeOver(t *testing.T) {
	opens := map[string]func(t *testing.T, p *mcpclient.Process){
		"a session first": func(t *testing.T, p *mcpclient.Process) {
			initialize(t, p, "modern-agent")
			announceIn(t, p, modern, "modern-agent", "src/dual")
		},
		"2026-07-28 first": func(t *testing.T, p *mcpclient.Process) {
			openIn(t, p, modern, "modern-agent")
			announceIn(t, p, modern, "modern-agent", "src/dual")
			initialize(t, p, "modern-agent")
		},
	}
	for name, open := range opens {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			a := shared(t, dir)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			next := bridged(t, dir, "codex")
			p := shared(t, dir, "--log-level", "debug")
			attached(t, p)
			open(t, p)
			id := modernCaller(t, p)
			if _, err := p.WaitLog(ctx(t), "presence open"); err != nil {
				t.Fatal(err)
			}

			p.Signal(syscall.SIGSTOP) // the other takes over; it re-attaches
			a.Signal(syscall.SIGKILL)
			a.Wait(ctx(t))
			if _, err := next.WaitLog(ctx(t), "took over as the shared server"); err != nil {
				t.Fatal(err)
			}
			p.Signal(syscall.SIGCONT)
			if _, err := p.WaitLog(ctx(t), "re-attached to the shared server"); err != nil {
				t.Fatal(err)
			}
			if caller := modernCaller(t, p); caller != id {
				t.Fatalf("its 2026-07-28 requests come from %s after the move, from %s before", caller, id)
			}
			if err := p.WaitLogs(ctx(t), 2, "presence open"); err != nil {
				t.Fatal(err)
			}
			for _, peer := range peersOf(t, next).Peers {
				if peer.Attached && peer.Client.Name == "modern-agent" && peer.ID != id {
					t.Errorf("the client, %s, is on the board as %s too", id, peer.ID)
				}
			}
		})
	}
}
