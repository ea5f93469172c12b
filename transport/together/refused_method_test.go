package together

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// The method a 2026-07-28 request names is its client's words: a server
// that lost its lease, refusing the request, quotes it in its log bounded,
// as it quotes a refused caller's headers. A method of 512 KiB made a log
// line of 512 KiB, as many as were sent.
func TestARefusedRequestsMethodIsLoggedBounded(t *testing.T) {
	core, logged := observer.New(zap.InfoLevel)
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Logger: zap.New(core),
		Refusal: func() *httpserver.Refusal { return &httpserver.Refusal{Reason: "lease_lost"} }})
	method := "tools/" + strings.Repeat("x", 512<<10)
	resp, body := newClient(t, s.url).do(http.MethodPost, "/mcp", "", modernRequest(1, method, ""), modernHeaders("tools/list", "")...)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, strconv.Itoa(wire.CodeLeaseLostModern)) {
		t.Fatalf("a request to a server that lost its lease: %d %.300s", resp.StatusCode, body)
	}
	lines := logged.FilterMessage("a request was refused").All()
	if len(lines) != 1 {
		t.Fatalf("the refusal was logged %d times", len(lines))
	}
	if got, _ := lines[0].ContextMap()["method"].(string); len(got) > 256 || !strings.HasPrefix(got, "tools/xxx") {
		t.Errorf("the refused request's method is logged as %d bytes (%.40q…)", len(got), got)
	}
}
