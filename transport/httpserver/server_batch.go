package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// serveBatch answers batch (which mcp-go does not take) by handing mcp-go
// each member in turn and gathering the answers: a JSON array, or, when the
// server sent notifications meanwhile, an event stream with those first and
// the array last. 202 when nothing is owed.
func (h *Server) serveBatch(w http.ResponseWriter, r *http.Request, batch json.RawMessage) {
	var notes []json.RawMessage
	answers, _ := wire.GatherEach(batch, func(i int, m json.RawMessage) (answer []byte, _ bool) {
		env, err := wire.ReadEnvelope(m)
		refusal, screened := wire.Screen(m)
		if !screened {
			refusal, screened = wire.Unreadable(env, err)
		}
		if screened {
			return refusal, true
		}
		if refusal := wire.PromptRefusal(h.cfg.MCP, env, m); refusal != nil {
			return refusal, true
		}
		rec, one := newBufferWriter(), withBody(r, m)
		carry.SetMember(one.Header, i) // each call of a batch is kept as its own
		// a member takes its session's notifications too, the stream's end
		// mark among them, which is never its client's
		h.mcp.ServeHTTP(&endsAtMark{ResponseWriter: rec}, one)
		switch {
		case rec.status == http.StatusOK && wire.IsEventStream(rec.header):
			_ = wire.ReadEvents(bytes.NewReader(rec.body), func(data []byte) error {
				if e, err := wire.ReadEnvelope(data); err == nil && e.Method == "" {
					answer = data
				} else {
					notes = append(notes, json.RawMessage(data))
				}
				return nil
			})
		case rec.status == http.StatusOK && len(bytes.TrimSpace(rec.body)) > 0:
			answer = bytes.TrimSpace(rec.body)
		case rec.status >= 400 && env.IsRequest():
			answer = wire.ErrorFrame(env.ID, mcp.INVALID_REQUEST,
				fmt.Sprintf("the server refused this message (%d): %s", rec.status, bytes.TrimSpace(rec.body)))
		}
		return answer, true
	})
	if len(notes) == 0 {
		if answers == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeFrame(w, http.StatusOK, answers)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for _, n := range notes {
		_ = writeEvent(w, n)
	}
	if answers != nil {
		_ = writeEvent(w, answers)
	}
}

// writeEvent writes one server-sent event carrying data.
func writeEvent(w io.Writer, data []byte) error {
	_, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", data)
	return err
}
