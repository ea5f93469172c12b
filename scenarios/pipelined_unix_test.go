//go:build unix

package scenarios

// A client that sends its first requests right behind initialize, without
// waiting for its answer, is served in every state: each request is
// answered after the initialize it follows (SIGSTOP, for the electing
// case, is why it is Unix's).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Initialize, initialized and tools/list written in one go to a process
// that has just started in a checkout with no server, or is the
// leaseholder, attached, electing (its leaseholder stopped), alone, or
// standalone: tools/list is answered with the tools, after the answer to
// initialize.
func TestRequestsPipelinedBehindInitializeAreServed(t *testing.T) {
	t.Parallel()
	roles := map[string]func(t *testing.T) *mcpclient.Process{
		"first, as it starts": func(t *testing.T) *mcpclient.Process { return shared(t, checkout(t)) },
		"leaseholder": func(t *testing.T) *mcpclient.Process {
			p := shared(t, checkout(t))
			serverURL(t, p)
			return p
		},
		"attached": func(t *testing.T) *mcpclient.Process {
			dir := checkout(t)
			serverURL(t, shared(t, dir))
			p := shared(t, dir)
			attached(t, p)
			return p
		},
		"electing": func(t *testing.T) *mcpclient.Process {
			dir := checkout(t)
			a := shared(t, dir)
			serverURL(t, a)
			stop(t, a)
			t.Cleanup(func() { a.Signal(syscall.SIGCONT) })
			p := shared(t, dir, "--busy-grace", "5m", "--election-bound", "10m")
			if _, err := p.WaitLog(ctx(t), "waiting for the server of the lease's owner"); err != nil {
				t.Fatal(err)
			}
			return p
		},
		"alone": func(t *testing.T) *mcpclient.Process {
			dir := checkout(t)
			os.MkdirAll(filepath.Join(dir, ".ai/local"), 0o755)
			if err := os.WriteFile(filepath.Join(dir, ".ai/local/state"), []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := shared(t, dir)
			if _, err := p.WaitLog(ctx(t), servedAlone); err != nil {
				t.Fatal(err)
			}
			return p
		},
		"standalone": func(t *testing.T) *mcpclient.Process { return start(t, checkout(t), "--standalone") },
	}
	for role, started := range roles {
		t.Run(role, func(t *testing.T) {
			p := started(t)
			err := p.SendLine(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"eager","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			if err != nil {
				t.Fatal(err)
			}
			r, err := p.Await(ctx(t), json.RawMessage("2"))
			if err != nil || r.Error != nil || !strings.Contains(string(r.Result), "majordomus_peers") {
				t.Fatalf("tools/list: %v %+v %s", err, r.Error, r.Result)
			}
			for _, f := range p.Frames() {
				if strings.Contains(string(f), `"id":1,`) {
					break
				}
				if strings.Contains(string(f), `"id":2,`) {
					t.Fatalf("tools/list was answered before initialize: %s", f)
				}
			}
		})
	}
}
