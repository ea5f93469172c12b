package httpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A call under way when Shutdown begins is answered on its session, which
// is closed only after it; a call that arrives on that session meanwhile
// is refused 503 without running, which a bridge sends to the next server.
func TestShutdownClosesNoSessionUnderItsCall(t *testing.T) {
	h := newHeldCall(t, "waiting for the requests under way") // Shutdown waits for the call
	answered := make(chan string, 1)
	go func() { _, body := h.post(holdCall); answered <- body }()
	<-h.entered
	stopped := make(chan error, 1)
	go func() { stopped <- h.s.Shutdown(context.Background()) }()
	select {
	case <-h.logged:
	case <-h.closed:
		close(h.release)
		t.Fatal("Shutdown closed the session while its call was under way")
	}
	resp, body := h.post(holdCall)
	var refusal wire.HTTPError
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &refusal) != nil || refusal.Error.Code != errCodeUnavailable {
		t.Errorf("a call on the session after Shutdown began was answered %v %s, want 503 %s", resp, body, errCodeUnavailable)
	}
	close(h.release)
	if body := <-answered; !strings.Contains(body, "held") {
		t.Errorf("the call under way was answered %s", body)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	<-h.closed
	if err := <-h.served; err != nil {
		t.Fatal(err)
	}
	if h.closedUnder.Load() {
		t.Error("the session was closed before its call returned")
	}
	if n := h.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
}
