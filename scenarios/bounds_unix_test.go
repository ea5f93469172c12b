//go:build unix

package scenarios

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A leaseholder that may hold fewer files open than its cap of
// connections (a hard limit of 1,024, as a container or an old system
// sets) still keeps no client of the lease out: another local user's
// connections without the token make room for a new client's before they
// take the last of its descriptors, and force no take-over
// (docs/security.md#bounded).
func TestConnectionsWithoutTheTokenLeaveALimitedLeaseholderItsFiles(t *testing.T) {
	const limit = 1024
	dir := checkout(t)
	args := []string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(limit), bin, "--http-port", "0"}
	a, err := mcpclient.Start("sh", args, dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, a, "sh", args)
	initialize(t, a, "claude-code")
	addr := strings.TrimPrefix(serverURL(t, a), "http://")
	for range limit {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("a connection without the token: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")) // answered, then idle: it is held
	}

	b := shared(t, dir)
	initialize(t, b, "codex")
	line, err := b.WaitLogAny(ctx(t), "bridging this stdio session", "taking it over", "serving this client alone")
	if err != nil || !strings.Contains(line, "bridging this stdio session") {
		t.Fatalf("a client beside %d connections without the token to a leaseholder limited to %d files: %v %s", limit, limit, err, line)
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
		t.Fatalf("majordomus_list: %v %s", err, text)
	}
}
