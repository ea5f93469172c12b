package board

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often a quiet /board/events stream says it lives, so
// that a page whose server went away finds out, and reads the revision
// unbidden: what the source does not signal shows by then.
const keepAlive = 15 * time.Second

// serveEvents streams a "change" event at the start and whenever the
// source's revision moves: the page then fetches what it shows again. The
// event carries the revision and nothing of the board.
func (p *Page) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	// A write to a reader that stopped reading (a frozen tab's) waits for
	// it: the request's end ends that wait too.
	defer context.AfterFunc(r.Context(), func() { _ = rc.SetWriteDeadline(time.Now()) })()
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	last := ""
	for {
		rev, next := p.src.Changes()
		if rev != last {
			last = rev
			if _, err := fmt.Fprintf(w, "event: change\ndata: %q\n\n", rev); err != nil || rc.Flush() != nil {
				return
			}
		}
		select {
		case <-r.Context().Done():
			return
		case <-next:
		case <-alive.C:
			if _, err := fmt.Fprint(w, ": alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}
