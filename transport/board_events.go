package transport

import (
	"fmt"
	"net/http"
	"time"
)

// boardKeepAlive is how often a quiet /board/events stream says it lives,
// so that a page whose server went away finds out.
const boardKeepAlive = 15 * time.Second

// serveBoardEvents streams a "change" event whenever the source's
// revision changes, and one at the start: the page then fetches what it
// shows again. The event carries the revision and nothing of the board.
func (h *HTTPServer) serveBoardEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	boardHeaders(w, "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	poll := time.NewTicker(h.cfg.BoardPoll)
	defer poll.Stop()
	alive := time.NewTicker(boardKeepAlive)
	defer alive.Stop()
	last := ""
	send := func() error {
		rev := h.cfg.Board.Revision()
		if rev == last {
			return nil
		}
		last = rev
		if _, err := fmt.Fprintf(w, "event: change\ndata: %q\n\n", rev); err != nil {
			return err
		}
		return rc.Flush()
	}
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil || send() != nil {
		return
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.boardDone:
			return
		case <-alive.C:
			if _, err := fmt.Fprint(w, ": alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-poll.C:
			if send() != nil {
				return
			}
		}
	}
}
