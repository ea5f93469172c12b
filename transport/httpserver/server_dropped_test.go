package httpserver

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A session whose client's stream drops while a call of its is under way
// (a bridge that gave up on a server continued after a freeze closes its
// stream, its call still in flight there) ends only once that call has
// been answered: ended first, the call would be answered "this session has
// ended" or "not on the board", and a bridge relays that as its answer.
func TestADroppedStreamEndsNoSessionUnderItsCall(t *testing.T) {
	h := newHeldCall(t, "it ends once its requests have ended") // the session's end waits for the call
	defer func() {
		if err := h.s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-h.served; err != nil {
			t.Error(err)
		}
	}()
	streamCtx, dropStream := context.WithCancel(context.Background())
	defer dropStream()
	stream, err := h.c.Do(h.request(streamCtx, http.MethodGet, ""))
	if err != nil || stream.StatusCode != http.StatusOK {
		t.Fatalf("the session's stream: %v %v", stream, err)
	}

	answered := make(chan string, 1)
	go func() { _, body := h.post(holdCall); answered <- body }()
	<-h.entered
	dropStream() // its connection closes
	stream.Body.Close()
	select {
	case <-h.logged:
	case <-h.closed:
	}
	close(h.release)
	if body := <-answered; !strings.Contains(body, "held") {
		t.Errorf("the call under way was answered %s", body)
	}
	<-h.closed
	if h.closedUnder.Load() {
		t.Error("the session was ended, its stream dropped, before its call returned")
	}
}
