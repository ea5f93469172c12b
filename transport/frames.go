package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// JSON-RPC error codes this package answers with itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInternalError  = -32603
)

// errOutputClosed reports that the client closed its end of stdout.
var errOutputClosed = errors.New("transport: output closed")

// FrameWriter writes whole JSON-RPC frames, one per line, to the client.
// It is safe for concurrent use; a frame is never interleaved with another.
// After the first write error every later write fails with errOutputClosed,
// and Closed is closed so that the loop can stop.
type FrameWriter struct {
	mu     sync.Mutex
	w      io.Writer
	err    error
	closed chan struct{}
}

// NewFrameWriter returns a FrameWriter over w (the process's stdout).
func NewFrameWriter(w io.Writer) *FrameWriter {
	return &FrameWriter{w: w, closed: make(chan struct{})}
}

// Write sends one frame. The frame is compacted onto a single line, so a
// pretty-printed body from a server can never break the line protocol.
func (f *FrameWriter) Write(frame []byte) error {
	var line bytes.Buffer
	line.Grow(len(frame) + 1)
	if err := json.Compact(&line, frame); err != nil {
		return err
	}
	line.WriteByte('\n')

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return errOutputClosed
	}
	if _, err := f.w.Write(line.Bytes()); err != nil {
		f.err = err
		close(f.closed)
		return errors.Join(errOutputClosed, err)
	}
	return nil
}

// WriteValue marshals v and sends it as one frame.
func (f *FrameWriter) WriteValue(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return f.Write(b)
}

// Closed is closed once a write has failed (the client is gone).
func (f *FrameWriter) Closed() <-chan struct{} { return f.closed }

// errorFrame builds a JSON-RPC error response. id is the raw id of the
// request (nil or empty for "null", as when the request could not be read).
func errorFrame(id json.RawMessage, code int, message string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return b
}

// envelope is what the transports need to know of a JSON-RPC message
// without decoding its params.
type envelope struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// IsRequest reports whether the message expects an answer.
func (e envelope) IsRequest() bool {
	return e.Method != "" && len(e.ID) > 0 && string(e.ID) != "null"
}

// readEnvelope decodes the envelope of one message (not a batch).
func readEnvelope(msg json.RawMessage) (envelope, error) {
	var e envelope
	err := json.Unmarshal(msg, &e)
	return e, err
}

// splitBatch returns the members of a batch, or nil and false when msg is
// not a JSON array.
func splitBatch(msg json.RawMessage) ([]json.RawMessage, bool) {
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return nil, false
	}
	var members []json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return nil, false
	}
	return members, true
}

// isObject reports whether msg is a JSON object.
func isObject(msg json.RawMessage) bool {
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// gather shapes answers like the message they answer: a batch gets an
// array, a single message its one answer; nil when none is owed.
func gather(msg json.RawMessage, answers [][]byte) []byte {
	if len(answers) == 0 {
		return nil
	}
	if _, batch := splitBatch(msg); !batch {
		return answers[0]
	}
	raw := make([]json.RawMessage, len(answers))
	for i, a := range answers {
		raw[i] = a
	}
	out, _ := json.Marshal(raw)
	return out
}

// maxMessageBytes is the largest message (or batch) a client may send,
// however it arrives: a longer stdio line is answered with tooLarge's error
// by the stdio loop, whatever serves the client (in process, alone, or
// through a bridge), and a larger POST body is refused by the HTTP server
// (413). One limit, so that every session answers the same message the
// same way (docs/security.md#bounded).
const maxMessageBytes = 1 << 20

// tooLarge answers every request in msg, a message over maxMessageBytes,
// with -32600 saying so; notifications get nothing.
func tooLarge(msg json.RawMessage) []byte {
	text := fmt.Sprintf("invalid request: the message is %d bytes, over the limit of %d bytes", len(msg), maxMessageBytes)
	members, batch := splitBatch(msg)
	if !batch {
		members = []json.RawMessage{msg}
	}
	var answers [][]byte
	for _, m := range members {
		if env, err := readEnvelope(m); err == nil && env.IsRequest() {
			answers = append(answers, errorFrame(env.ID, codeInvalidRequest, text))
		}
	}
	return gather(msg, answers)
}

// metaOf is the _meta of a message's params, and the protocol revision it
// names ("" when none).
func metaOf(params json.RawMessage) (json.RawMessage, string) {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || len(p.Meta) == 0 {
		return nil, ""
	}
	var m struct {
		Version string `json:"io.modelcontextprotocol/protocolVersion"`
	}
	_ = json.Unmarshal(p.Meta, &m)
	return p.Meta, m.Version
}

// requestFrame is a request with a private id.
func requestFrame(id, method string, params json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", id, method, params})
	return b
}

func notificationFrame(method string) []byte {
	return []byte(`{"jsonrpc":"2.0","method":"` + method + `"}`)
}

// announceFrame is the replay of a carried announcement, marked as one:
// bookkeeping, not an execution.
func announceFrame(args json.RawMessage) []byte {
	params, _ := json.Marshal(struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Meta      map[string]bool `json:"_meta"`
	}{announceTool, args, map[string]bool{replayMeta: true}})
	return requestFrame(announceID, "tools/call", params)
}
