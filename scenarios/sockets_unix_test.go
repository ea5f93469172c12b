//go:build unix

package scenarios

import (
	"os"
	"os/exec"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// Hosts built on Node (Claude Code, Gemini CLI) give the process a socket
// for stdin and another for stdout, not pipes (on Linux the process reads
// and writes them raw, through descriptors of its own: internal/rawio). A
// leaseholder and a bridge so spawned share one server through a stream
// of calls, and each ends when its host ends its stdin.
func TestClientsOnSocketStdioShareAServer(t *testing.T) {
	dir := checkout(t)
	a := onSockets(t, dir, "--http-port", "0")
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := onSockets(t, dir, "--http-port", "0")
	initialize(t, b, "gemini-cli")
	attached(t, b)

	c := ctx(t)
	for _, p := range []*mcpclient.Process{b, a, b} {
		for range 100 {
			var repo struct{ Objects int }
			if isErr, text, err := p.CallTool(c, "majordomus_repository", nil, &repo); err != nil || isErr || repo.Objects == 0 {
				t.Fatalf("majordomus_repository: %v %v %s", err, isErr, text)
			}
		}
	}
	if board := peersOf(t, b); len(board.Peers) != 2 {
		t.Fatalf("the board after calls from both: %+v", board)
	}
	for _, p := range []*mcpclient.Process{b, a} {
		if err := p.CloseStdin(); err != nil {
			t.Fatal(err)
		}
		exitsWith(t, p, 0)
	}
	assertOnlyFrames(t, append(a.Frames(), b.Frames()...))
}

// onSockets spawns majordomus-mcp in dir with args, its stdin and stdout
// sockets; the process is killed at the end of the test if it still runs.
func onSockets(t *testing.T, dir string, args ...string) *mcpclient.Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, os.Environ()
	p, err := mcpclient.StartOnSockets(cmd)
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, p, bin, args)
	return p
}
