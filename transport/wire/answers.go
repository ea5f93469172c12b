package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// The answers and refusals a relay makes, and what it reads of the
// server's.

// LeaseLostAnswer reports whether an answer is the refusal of a server
// that lost its lease, with code: CodeLeaseLost answers an initialize,
// CodeLeaseLostModern a 2026-07-28 request.
func LeaseLostAnswer(answer []byte, code int) bool {
	var a struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	if !bytes.Contains(answer, []byte(ErrCodeLeaseLost)) || json.Unmarshal(answer, &a) != nil || a.Error == nil || a.Error.Code != code {
		return false
	}
	return a.Error.Data.Reason == ErrCodeLeaseLost || strings.Contains(a.Error.Message, ErrCodeLeaseLost)
}

// HTTPErrorText is the "code: message" of a JSON error body, or the
// body itself when it is not one.
func HTTPErrorText(body []byte) string {
	var e HTTPError
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		return e.Error.Code + ": " + e.Error.Message
	}
	return strings.TrimSpace(string(body))
}

// IsAnswer reports whether body is one JSON-RPC response.
func IsAnswer(body []byte) bool {
	var a struct {
		JSONRPC string          `json:"jsonrpc"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	return json.Unmarshal(body, &a) == nil && a.JSONRPC == "2.0" && (len(a.Result) > 0 || len(a.Error) > 0)
}

// ResultsByID maps the ids of an answer's members (IDKey: mcp-go writes
// 1.0 back as 1) to their results.
func ResultsByID(answer []byte) map[string]json.RawMessage {
	results := map[string]json.RawMessage{}
	for _, m := range Members(answer) {
		var a Envelope
		if json.Unmarshal(m, &a) == nil && len(a.Result) > 0 {
			results[IDKey(a.ID)] = a.Result
		}
	}
	return results
}

// ErrorFrame builds a JSON-RPC error response. id is the raw id of the
// request (nil or empty for "null", as when the request could not be read).
func ErrorFrame(id json.RawMessage, code int, message string) []byte {
	return DataErrorFrame(id, code, message, nil)
}

// DataErrorFrame is ErrorFrame with data, the error's data (nil: none).
func DataErrorFrame(id json.RawMessage, code int, message string, data any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	var f struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    any    `json:"data,omitempty"`
		} `json:"error"`
	}
	f.JSONRPC, f.ID, f.Error.Code, f.Error.Message, f.Error.Data = "2.0", id, code, message, data
	b, _ := json.Marshal(f)
	return b
}

// Unavailable answers every request in msg (one message or a batch) with
// -32603 "shared server unavailable: <reason>"; notifications and answers
// get nothing. It is what a client hears when nothing can serve it.
func Unavailable(msg json.RawMessage, reason error) []byte {
	return RefuseEach(msg, mcp.INTERNAL_ERROR, "shared server unavailable: "+reason.Error())
}

// RefuseEach answers every request in msg with the error code and text:
// every member with an id and a method, even one where another copy of a
// key failed to decode ("method":5 beside "method":"ping"), whose client
// waits for its answer all the same. A member whose id is null or neither
// a string nor a number, or that is not an object, is answered with id
// null, as Screen answers it: JSON-RPC answers an id it cannot tell null,
// and echoes no other. Its answers are bounded as GatherEach bounds them.
func RefuseEach(msg json.RawMessage, code int, text string) []byte {
	answers, _ := GatherEach(msg, func(_ int, m json.RawMessage) ([]byte, bool) {
		switch env, err := ReadEnvelope(m); {
		case env.IsRequest() && scalarID(env.ID):
			return ErrorFrame(env.ID, code, text), true
		case errors.Is(err, ErrNotAnObject), env.Method != "" && len(env.ID) > 0:
			return ErrorFrame(nil, code, text), true
		}
		return nil, true
	})
	return answers
}

// scalarID reports whether id, present, is a string or a number: the ids
// a request may have (Screen, RefuseEach).
func scalarID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || '0' <= id[0] && id[0] <= '9')
}
