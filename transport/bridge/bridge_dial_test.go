package bridge

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// A connection the bridge dials proves the lease's secret as it is made
// (its probe asks for the seal, which only the secret's holder can): at
// the server's connection cap, a newcomer without the token never has it
// closed to make room, idle though it is between the probe and the
// bridge's first request on it.
func TestADialedConnectionKeepsItsPlaceAtTheCap(t *testing.T) {
	key := secret.New()
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserver.New(httpserver.Config{MCP: server.NewMCPServer("majordomus", "1"), Secret: key, MaxConnections: 2,
		Identity: func(bool) httpserver.Identity { return httpserver.Identity{Name: "majordomus", Leaseholder: true} }, Logger: zap.NewNop()})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	base := httpserver.URLOf(ln.Addr())
	addr := strings.TrimPrefix(base, "http://")

	dialed, err := provenDialer(base, key, 5*time.Second)(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dialed.Close() })
	get := func(c net.Conn, header string) (int, error) {
		_ = c.SetDeadline(time.Now().Add(10 * time.Second)) // the cap of the wait, not the measure
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: " + addr + header + "\r\n\r\n")); err != nil {
			return 0, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i := range 2 { // the second finds the cap, and is answered once it has made room
		other, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { other.Close() })
		if i == 1 {
			if status, err := get(other, ""); status != http.StatusOK {
				t.Fatalf("the newcomer at the cap: %d %v", status, err)
			}
		}
	}
	if status, err := get(dialed, "\r\nAuthorization: "+secret.Authorization(key)); status != http.StatusOK {
		t.Fatalf("the bridge's connection after a newcomer at the cap: %d %v", status, err)
	}
}
