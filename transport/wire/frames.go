package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// errOutputClosed reports that the client closed its end of stdout.
var errOutputClosed = errors.New("transport: output closed")

// FrameWriter writes whole JSON-RPC frames, one per line, to the client.
// It is safe for concurrent use; a frame is never interleaved with another.
// After the first write error every later write fails with errOutputClosed,
// and Closed is closed so that the loop can stop.
type FrameWriter struct {
	mu     sync.Mutex // held across a write, which waits as long as the client does not read
	w      io.Writer
	err    error
	closed chan struct{}
	// after runs once the first frame is written; afterMu is its own
	// lock, so that setting it never waits on a client that does not read.
	afterMu sync.Mutex
	after   func()
	written bool // a frame has gone to the client, or failed to
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
	if f.err != nil {
		f.mu.Unlock()
		return errOutputClosed
	}
	_, err := f.w.Write(line.Bytes())
	if err != nil {
		f.err = err
		close(f.closed)
		err = errors.Join(errOutputClosed, err)
	}
	f.mu.Unlock()
	f.afterMu.Lock()
	after := f.after
	f.after, f.written = nil, true
	f.afterMu.Unlock()
	if after != nil {
		after()
	}
	return err
}

// AfterWritten runs after once a frame has gone to the client (or failed
// to): at once when one has, else after the next. What must not hold the
// client's first answer back waits for it. It never waits for the client
// to read.
func (f *FrameWriter) AfterWritten(after func()) {
	f.afterMu.Lock()
	if !f.written {
		f.after = after
		f.afterMu.Unlock()
		return
	}
	f.afterMu.Unlock()
	after()
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

// Envelope is what the transports need to know of a JSON-RPC message
// without decoding its params.
type Envelope struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	// JSONRPC is read so that a copy of it that is not a string fails the
	// reading, as it fails mcp-go's (Unreadable).
	JSONRPC string          `json:"jsonrpc,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// IsRequest reports whether the message expects an answer.
func (e Envelope) IsRequest() bool {
	return e.Method != "" && len(e.ID) > 0 && string(e.ID) != "null"
}

// IsMethod reports whether msg is one message of method.
func IsMethod(msg json.RawMessage, method mcp.MCPMethod) bool {
	if !MayHold(msg, string(method)) {
		return false
	}
	env, err := ReadEnvelope(msg)
	return err == nil && env.Method == string(method)
}

// ErrNotAnObject is ReadEnvelope's error for a message that is not a JSON
// object.
var ErrNotAnObject = errors.New("a message must be a JSON object")

// ReadEnvelope decodes the envelope of one message (not a batch); what is
// not a JSON object is no message.
func ReadEnvelope(msg json.RawMessage) (Envelope, error) {
	if !isObject(msg) {
		return Envelope{}, ErrNotAnObject
	}
	var e Envelope // on the heap: only what is an object is read
	err := json.Unmarshal(msg, &e)
	return e, err
}

// isObject reports whether msg is a JSON object.
func isObject(msg json.RawMessage) bool {
	trimmed := bytes.TrimLeft(msg, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

// ParamsOf is msg's params as they stand: nil where it has none, or is not
// one JSON object.
func ParamsOf(msg json.RawMessage) json.RawMessage {
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(msg, &m)
	return m.Params
}

// MetaOf is the _meta of a message's params, and the protocol revision it
// names ("" when none).
func MetaOf(params json.RawMessage) (json.RawMessage, string) {
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	if !mayHoldKey(params, `"_meta"`) || json.Unmarshal(params, &p) != nil || len(p.Meta) == 0 {
		return nil, ""
	}
	// Its keys are matched exactly, as mcp-go reads _meta (into a map),
	// though _meta itself in any case (a struct's field).
	var m map[string]json.RawMessage
	var version string
	if json.Unmarshal(p.Meta, &m) == nil {
		_ = json.Unmarshal(m[mcp.MetaKeyProtocolVersion], &version)
	}
	return p.Meta, version
}

// Taken reports whether a server takes meta, a 2026-07-28 request's _meta:
// a version it knows, and client capabilities, which mcp-go requires of
// every such request.
func Taken(meta json.RawMessage) bool {
	var m *mcp.Meta
	if json.Unmarshal(meta, &m) != nil {
		return false
	}
	v := m.ProtocolVersion()
	return mcp.IsModernProtocol(v) && mcp.IsValidProtocolVersion(v) && m.ClientCapabilities() != nil
}

// MayHold reports whether a JSON text may hold s, as a decoder reads it:
// as written, or spelled with escapes. It only spares a decoding where s
// cannot be.
func MayHold(text []byte, s string) bool {
	return bytes.Contains(text, []byte(s)) || escapesASCII(text)
}

// mayHoldKey reports whether a JSON text may hold the key s, as Go's
// decoders (mcp-go's) match keys: in any case, or spelled with escapes. A
// key is looked for by its first two bytes, which no case changes (a quote
// and an underscore), at the speed of bytes.Index.
func mayHoldKey(text []byte, s string) bool {
	if escapesASCII(text) {
		return true
	}
	for rest := text; ; {
		i := bytes.Index(rest, []byte(s[:2]))
		if i < 0 || len(rest)-i < len(s) {
			return false
		}
		if bytes.EqualFold(rest[i:i+len(s)], []byte(s)) {
			return true
		}
		rest = rest[i+1:]
	}
}

// escapesASCII reports whether text may spell an ASCII character with an
// escape (\/, or \u00XX below \u0080), as a method or a key could be
// spelled; the escapes text is full of (\n, \", \u of what is not ASCII)
// cannot.
func escapesASCII(text []byte) bool {
	if bytes.Contains(text, []byte(`\/`)) {
		return true
	}
	for rest := text; ; {
		i := bytes.Index(rest, []byte(`\u00`))
		if i < 0 || len(rest) < i+6 {
			return false
		}
		if c := rest[i+4]; c >= '0' && c <= '7' {
			return true
		}
		rest = rest[i+4:]
	}
}

// RequestFrame is a request with a private id.
func RequestFrame(id, method string, params json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", id, method, params})
	return b
}

// Backend answers the client's messages.
type Backend interface {
	// Handle answers one message or one batch. It returns the answer frame,
	// or nil when nothing is owed (a notification, a response to a
	// server-to-client request, a batch of those). It may write other frames
	// (notifications, server-to-client requests) before returning. It is
	// called concurrently, once per line.
	Handle(ctx context.Context, msg json.RawMessage) []byte
}

// AnswerError is why an answer is not a success: no answer, a JSON-RPC
// error, or a tool result flagged isError.
func AnswerError(answer []byte) error {
	if len(answer) == 0 {
		return errors.New("no answer")
	}
	var a struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(answer, &a); err != nil {
		return err
	}
	if a.Error != nil {
		return errors.New(a.Error.Message)
	}
	if ToolFailed(a.Result) {
		return ErrToolFailed
	}
	return nil
}

// ErrToolFailed is AnswerError's error for a tools/call answered isError.
var ErrToolFailed = errors.New("the tool reported an error")

// ToolFailed reports whether a tools/call result says isError.
func ToolFailed(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return json.Unmarshal(result, &r) == nil && r.IsError
}

// maxLineBytes bounds one input line the loop reads at all. A longer line
// is answered with a parse error and skipped; the session goes on. A line
// within it but over maxMessageBytes is answered as too large.
const maxLineBytes = 16 << 20

// ReadLine reads one line, or discards one longer than maxLineBytes and
// returns nil and no error; a blank line is empty, not nil.
func ReadLine(r *bufio.Reader) ([]byte, error) { return readLine(r, maxLineBytes) }

// readLine is ReadLine with limit in place of maxLineBytes.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(bytes.TrimSuffix(chunk, []byte("\n"))) > limit { // its newline aside
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return nil, nil
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			buf = buf[:len(buf)-1] // a blank line is then empty: not nil, as an overlong one is
		}
		return buf, err
	}
}
