package together

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// The server hands /board to the page it mounts only under its loopback
// name and from its own origin, as for /mcp: a rebound name or another
// origin gets 403, whatever the path (the one-time link's too). Without a
// page /board is 404. Its shutdown ends the page's requests, so that an
// event stream keeps no graceful shutdown from finishing.
func TestTheServerMountsTheBoardPage(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "page\n")
		if r.URL.Path == "/board/events" {
			_ = http.NewResponseController(w).Flush()
			<-r.Context().Done()
		}
	})
	s := serveHTTP(t, httpserver.Config{MCP: newFixture().srv, Board: page})
	get := func(url, path string, header ...string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		if len(header) == 2 && header[0] == "Host" {
			req.Host = header[1]
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, h := range [][]string{{"Host", "evil.example"}, {"Origin", "http://evil.example"}, {"Origin", "http://127.0.0.1:1"}} {
		for _, path := range []string{"/board", "/board?token=x", "/board/api/peers", "/board/events"} {
			if resp, body := get(s.url, path, h...); resp.StatusCode != http.StatusForbidden || refusal(t, body).Error.Code != "forbidden" {
				t.Errorf("GET %s with %v: %d %s", path, h, resp.StatusCode, body)
			}
		}
	}
	if resp, body := get(s.url, "/board/api/peers", "Origin", s.url); resp.StatusCode != http.StatusOK || body != "page\n" {
		t.Errorf("GET /board/api/peers from its own origin: %d %s", resp.StatusCode, body)
	}
	none := serveHTTP(t, httpserver.Config{MCP: newFixture().srv})
	if resp, _ := get(none.url, "/board"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a server without a board answered GET /board %d", resp.StatusCode)
	}

	resp, err := http.Get(s.url + "/board/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	shut, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(shut); err != nil {
		t.Fatalf("the shutdown with a board stream open: %v", err)
	}
	if b, _ := io.ReadAll(resp.Body); !strings.HasPrefix(string(b), "page") {
		t.Fatalf("the stream said %q", b)
	}
}
