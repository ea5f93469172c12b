//go:build unix

package scenarios

import (
	"bufio"
	"io"
	"net"
	"net/http"
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
	dir, a := limitedLeaseholder(t, limit)
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

// A leaseholder limited to 1,024 open files, whose clients hold its
// connections as bridges do (a session each, its POST connection and its
// listen stream), is full before its connections are all taken: a new
// client is served alone, told the server is full, and never finds its
// probe closed as it comes, which would have it take a healthy
// leaseholder's lease over (docs/design.md#sharing-heals: a full server).
func TestALimitedLeaseholderIsFullBeforeItsConnectionsAre(t *testing.T) {
	const limit = 1024
	dir, a := limitedLeaseholder(t, limit)
	if line, err := a.WaitLogAny(ctx(t), "the open-file limit holds"); err != nil || !strings.Contains(line, `"max_sessions":128`) {
		t.Fatalf("the leaseholder does not say that its file limit holds its sessions down: %v %s", err, line)
	}
	addr := strings.TrimPrefix(serverURL(t, a), "http://")
	name, value, _ := strings.Cut(connect(t, dir).Header, ": ")
	dial := func(head string) (*http.Response, error) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { conn.Close() })
		_, _ = conn.Write([]byte(head))
		return http.ReadResponse(bufio.NewReader(conn), nil)
	}
	opening := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"held","version":"1"}}}`
	for range limit / 4 { // as many sessions as would hold every connection allowed
		resp, err := dial("POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\n" + name + ": " + value + "\r\nContent-Type: application/json\r\n" +
			"Accept: application/json, text/event-stream\r\nContent-Length: " + strconv.Itoa(len(opening)) + "\r\n\r\n" + opening)
		if err != nil {
			t.Fatalf("a session of this user's: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode == http.StatusServiceUnavailable {
			break // full: a new client is served alone until a session ends
		}
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("opening a session: %d", resp.StatusCode)
		}
		stream, err := dial("GET /mcp HTTP/1.1\r\nHost: " + addr + "\r\n" + name + ": " + value + "\r\nAccept: text/event-stream\r\n" +
			"Mcp-Session-Id: " + sid + "\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n")
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("the session's listen stream: %v %v", err, stream)
		}
	}

	b := shared(t, dir)
	initialize(t, b, "codex")
	line, err := b.WaitLogAny(ctx(t), "is full", "taking it over")
	if err != nil || !strings.Contains(line, "serving this client alone") {
		t.Fatalf("a client beside this user's sessions holding a leaseholder limited to %d files: %v %s", limit, err, line)
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
		t.Fatalf("majordomus_list: %v %s", err, text)
	}
}

// A leaseholder limited to 128 open files (a cap of 64 connections),
// every one of them held by this user's own connections, proven by the
// token and left idle (a client's keep-alive connections, no session
// among them), still takes a new client in: the connection idle the
// longest makes room for its probe, which is never closed as it comes and
// never has it take a healthy leaseholder's lease over.
func TestIdleConnectionsWithTheTokenForceNoTakeOver(t *testing.T) {
	const limit = 128
	dir, a := limitedLeaseholder(t, limit)
	addr := strings.TrimPrefix(serverURL(t, a), "http://")
	header := connect(t, dir).Header
	for i := range limit / 2 { // every place the cap allows
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("a connection with the token: %v", err)
		}
		t.Cleanup(func() { conn.Close() })
		_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + "\r\n" + header + "\r\n\r\n"))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d with the token within the cap: %v %v", i+1, err, resp)
		}
		_, _ = io.Copy(io.Discard, resp.Body) // answered, then idle: it is held
	}

	b := shared(t, dir)
	initialize(t, b, "codex")
	line, err := b.WaitLogAny(ctx(t), "bridging this stdio session", "taking it over", "serving this client alone")
	if err != nil || !strings.Contains(line, "bridging this stdio session") {
		t.Fatalf("a client beside %d idle connections with the token to a leaseholder limited to %d files: %v %s", limit/2, limit, err, line)
	}
	if isErr, text, err := b.CallTool(ctx(t), "majordomus_list", map[string]any{}, nil); err != nil || isErr {
		t.Fatalf("majordomus_list: %v %s", err, text)
	}
}

// limitedLeaseholder starts a checkout's first client under a limit of
// open files, initialized: the leaseholder, and the checkout.
func limitedLeaseholder(t *testing.T, limit int) (string, *mcpclient.Process) {
	t.Helper()
	dir := checkout(t)
	args := []string{"-c", `ulimit -n "$0" && exec "$@"`, strconv.Itoa(limit), bin, "--http-port", "0"}
	a, err := mcpclient.Start("sh", args, dir, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	killedAtEnd(t, a, "sh", args)
	initialize(t, a, "claude-code")
	return dir, a
}
