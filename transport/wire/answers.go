package wire

import (
	"bytes"
	"encoding/json"
	"strings"
)

// What a relay reads of the server's answers and refusals.

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
