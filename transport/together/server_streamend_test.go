package together

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// The mark EndStreams sends through a session's notifications, after what
// the session was told, is never written to its client, whichever of the
// session's writers takes it: its GET stream, or a POST in flight, which
// mcp-go hands the session's notifications too. Which one takes it is a
// race, run many times over.
func TestTheStreamEndMarkReachesNoClient(t *testing.T) {
	markReachesNoClient(t, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`)
}

// Nor when the POST in flight is a batch, whose members mcp-go is handed
// one by one, each taking the session's notifications as it runs.
func TestTheStreamEndMarkReachesNoBatchClient(t *testing.T) {
	markReachesNoClient(t, `[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}]`)
}

// markReachesNoClient ends the streams of a session with a GET stream open
// while post, which calls "wait", is in flight, and fails if the mark
// reached either.
func markReachesNoClient(t *testing.T, post string) {
	t.Helper()
	for range 40 {
		f := newFixture()
		s := serveHTTP(t, httpserver.Config{MCP: f.srv, StreamEndBound: 20 * time.Millisecond}) // when the POST takes the mark
		c := newClient(t, s.url)
		sid := c.initialize()
		req, err := http.NewRequest(http.MethodGet, s.url+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", secret.Authorization(testSecret))
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		streamed := make(chan string, 1)
		go func() {
			var all []string
			for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
				all = append(all, sc.Text())
			}
			streamed <- strings.Join(all, "\n")
		}()
		posted := make(chan string, 1)
		go func() {
			_, body := c.do(http.MethodPost, "/mcp", sid, post)
			posted <- body
		}()
		<-f.blocked
		for range 50 { // what the session was told: its writers both take it
			_ = f.srv.SendNotificationToSpecificClient(sid, "notifications/message", map[string]any{"level": "warning", "data": "lost"})
		}
		s.EndStreams()
		stream := <-streamed
		resp.Body.Close()
		f.releaseAll()
		if body := <-posted; strings.Contains(body, "majordomus/stream-end") || strings.Contains(stream, "majordomus/stream-end") {
			t.Fatalf("the mark reached the client:\nPOST: %s\nGET: %s", body, stream)
		}
	}
}
