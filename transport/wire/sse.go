package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
)

// ReadEvents calls each with the data of every server-sent event on r, in
// order, until r ends or each fails. Event types, ids and comments are
// ignored: every event of MCP's streamable HTTP carries one JSON-RPC
// message (or batch) in its data, as long as the server made it: an
// answer is not bounded as a client's line is (maxLineBytes), and a local
// session writes it whole (R8).
func ReadEvents(r io.Reader, each func(data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	pending := false
	for {
		line, err := readLine(br, math.MaxInt)
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0 && err == nil:
			if pending {
				if err := each(data); err != nil {
					return err
				}
			}
			data, pending = nil, false
		case bytes.HasPrefix(line, []byte("data:")):
			value := bytes.TrimPrefix(line[len("data:"):], []byte(" "))
			if pending {
				data = append(data, '\n')
			}
			data = append(data, value...)
			pending = true
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if pending {
					return each(data)
				}
				return nil
			}
			return err
		}
	}
}

// IsEventStream reports whether a response carries server-sent events.
func IsEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}

// IsJSON reports whether a response or request carries application/json.
func IsJSON(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "application/json"
}
