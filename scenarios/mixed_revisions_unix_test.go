//go:build unix

package scenarios

import (
	"strings"
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

			reattached(t, p, a, next)
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

// A client speaking both revisions whose session moves hears that the
// lists may have changed as it hears a change in every mode: untagged on
// its session, and tagged on each listen that asked for it. What changed
// as it moved was announced on neither server's session of it, nor on
// either's listen: whichever way it moves (its process takes over, it
// re-attaches, it joins from alone), its listen would otherwise miss it.
func TestAClientMixingRevisionsHearsItsSessionAndItsListenAfterAMove(t *testing.T) {
	moves := map[string]func(t *testing.T, dir string) (p *mcpclient.Process, move func()){
		"its process took over": func(t *testing.T, dir string) (*mcpclient.Process, func()) {
			a := shared(t, dir)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			p := bridged(t, dir, "dual-era")
			return p, func() {
				a.Signal(syscall.SIGKILL)
				a.Wait(ctx(t))
				if _, err := p.WaitLog(ctx(t), "took over as the shared server"); err != nil {
					t.Fatal(err)
				}
			}
		},
		"it re-attached": func(t *testing.T, dir string) (*mcpclient.Process, func()) {
			a := shared(t, dir)
			initialize(t, a, "claude-code")
			serverURL(t, a)
			next := bridged(t, dir, "codex")
			p := bridged(t, dir, "dual-era")
			return p, func() { reattached(t, p, a, next) }
		},
		"it joined from alone": func(t *testing.T, dir string) (*mcpclient.Process, func()) {
			p, usable := aloneFromTheStart(t, dir)
			return p, func() {
				usable()
				d := shared(t, dir)
				initialize(t, d, "claude-code")
				serverURL(t, d)
				if _, err := p.WaitLog(ctx(t), "joined the checkout's shared server"); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, setUp := range moves {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t)
			p, move := setUp(t, dir)
			listen, err := p.Send("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"promptsListChanged": true}}, "dual-era"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.WaitFrame(ctx(t), "the listen acknowledged", func(f []byte) bool {
				return strings.Contains(string(f), `"method":"notifications/subscriptions/acknowledged"`)
			}); err != nil {
				t.Fatal(err)
			}
			from := len(p.Frames())
			move()
			for _, want := range []string{
				`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`,
				`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + string(listen) + `}}}`,
			} {
				if _, err := p.WaitFrameAfter(ctx(t), want+" after the move", from, func(f []byte) bool { return string(f) == want }); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
