//go:build unix

package scenarios

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A host that respawns its killed server (Claude Code does) gets its
// client back under the same peer id, and the other agents see it working
// on what it announced, as before: whether the killed process was the
// leaseholder or a bridged client. The host is a shell that runs the
// server twice, on the same pipes; the test is the other client's host.
func TestARespawnedClientIsBackWithItsAnnouncement(t *testing.T) {
	for _, killed := range []string{"the leaseholder", "a bridged client"} {
		t.Run(killed, func(t *testing.T) {
			dir := checkout(t)
			var other *mcpclient.Process
			if killed == "a bridged client" {
				other = shared(t, dir)
				initialize(t, other, "other-agent")
				serverURL(t, other)
			}
			host := respawning(t, dir)
			initialize(t, host, "claude-code")
			scope := []string{"docs", "src/parser"}
			if isErr, text, err := host.CallTool(ctx(t), "majordomus_announce", map[string]any{"intent": "the parser", "scope": scope}, nil); err != nil || isErr {
				t.Fatalf("majordomus_announce: %s %v", text, err)
			}
			peer := peersOf(t, host).Caller
			if other == nil {
				serverURL(t, host)
				other = shared(t, dir)
				initialize(t, other, "other-agent")
				attached(t, other)
			}

			if killed == "a bridged client" { // the server sees a stream end
				if _, err := host.WaitLog(ctx(t), "stream open"); err != nil {
					t.Fatal(err)
				}
			}
			_ = syscall.Kill(serverPID(t, host), syscall.SIGKILL)
			if _, err := host.WaitLog(ctx(t), "respawning"); err != nil { // dead: it read nothing more
				t.Fatal(err)
			}
			if killed == "a bridged client" { // the server saw it go: its id is free
				if _, err := other.WaitLog(ctx(t), "session closed", `"peer":"`+peer+`"`); err != nil {
					t.Fatal(err)
				}
			}
			initialize(t, host, "claude-code")
			if got := peersOf(t, host).Caller; got != peer {
				t.Fatalf("the respawned client is %s, want %s, its peer id before", got, peer)
			}
			for _, q := range peersOf(t, other).Peers {
				if q.ID != peer {
					continue
				}
				if !q.Attached || q.Announcement == nil || q.Announcement.Intent != "the parser" || !slices.Equal(q.Announcement.Scope, scope) {
					t.Fatalf("the other client sees %s back as %+v, want attached, working on the parser in %q", peer, q, scope)
				}
				return
			}
			t.Fatalf("the other client's board does not list %s: %+v", peer, peersOf(t, other))
		})
	}
}

// respawning starts a host that runs a shared server in dir and, when it
// ends, says "respawning" and runs another, on the same pipes; both are
// killed at the end of the test.
func respawning(t *testing.T, dir string) *mcpclient.Process {
	t.Helper()
	const twice = `"$0" "$@"; echo respawning >&2; "$0" "$@"; exit 0`
	cmd := exec.Command("sh", "-c", twice, bin, "--http-port", "0", "--log-level", "debug")
	cmd.Dir, cmd.Env = dir, os.Environ()
	p, err := mcpclient.StartCmd(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(serverPID(t, p), syscall.SIGKILL)
		p.Kill(context.Background())
		if t.Failed() {
			t.Logf("stderr of the respawning host:\n%s", strings.Join(p.Logs(), "\n"))
		}
	})
	return p
}

// serverPID is the pid of the latest log line of a host's server.
func serverPID(t *testing.T, p *mcpclient.Process) int {
	t.Helper()
	logs := p.Logs()
	for i := len(logs) - 1; i >= 0; i-- {
		var line struct{ PID int }
		if json.Unmarshal([]byte(logs[i]), &line) == nil && line.PID > 0 {
			return line.PID
		}
	}
	t.Fatalf("no log line names the server's pid:\n%q", logs)
	return 0
}
