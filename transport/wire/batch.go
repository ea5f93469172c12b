package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/mark3labs/mcp-go/mcp"
)

// SplitBatch returns the members of a batch, or nil and false when msg is
// not a JSON array.
func SplitBatch(msg json.RawMessage) ([]json.RawMessage, bool) {
	if !isBatch(msg) {
		return nil, false
	}
	members := []json.RawMessage{}
	for _, m := range batchMembers(msg) {
		members = append(members, m)
	}
	return members, true
}

// Members is the members of msg when it is a batch, else msg alone.
func Members(msg json.RawMessage) []json.RawMessage {
	if members, batch := SplitBatch(msg); batch {
		return members
	}
	return []json.RawMessage{msg}
}

// eachMember yields the members of msg when it is a batch, else msg
// alone: what is not valid JSON is yielded whole.
func eachMember(msg json.RawMessage) iter.Seq2[int, json.RawMessage] {
	if !isBatch(msg) {
		return func(yield func(int, json.RawMessage) bool) { yield(0, msg) }
	}
	return batchMembers(msg)
}

// batchMembers yields the members of the batch msg, valid JSON, one at a
// time and each a slice of msg (capped, so that an append copies): a 16
// MiB line of the smallest members, split into copies all at once, cost a
// process 1 GB. They are found by one pass that follows only strings and
// nesting, which is why msg must be valid.
func batchMembers(msg json.RawMessage) iter.Seq2[int, json.RawMessage] {
	return func(yield func(int, json.RawMessage) bool) {
		t := bytes.TrimLeft(msg, " \t\r\n")
		depth, start, n, inString, escaped := 0, 1, 0, false, false
		for j := 1; j < len(t); j++ {
			switch c := t[j]; {
			case inString:
				escaped, inString = !escaped && c == '\\', escaped || c != '"'
			case c == '"':
				inString = true
			case c == '[' || c == '{':
				depth++
			case depth > 0 && (c == ']' || c == '}'):
				depth--
			case depth == 0 && (c == ',' || c == ']'):
				if m := bytes.Trim(t[start:j], " \t\r\n"); len(m) > 0 {
					if !yield(n, m[:len(m):len(m)]) {
						return
					}
					n++
				}
				start = j + 1
			}
		}
	}
}

// isBatch reports whether msg is a JSON array: a batch.
func isBatch(msg json.RawMessage) bool {
	t := bytes.TrimLeft(msg, " \t\r\n")
	return len(t) > 0 && t[0] == '[' && json.Valid(t)
}

// Gather shapes answers like the message they answer: a batch gets an
// array, a single message its one answer; nil when none is owed.
func Gather(msg json.RawMessage, answers [][]byte) []byte {
	if len(answers) == 0 {
		return nil
	}
	if !isBatch(msg) {
		return answers[0]
	}
	raw := make([]json.RawMessage, len(answers))
	for i, a := range answers {
		raw[i] = a
	}
	out, _ := json.Marshal(raw)
	return out
}

// MaxMessageBytes is the largest message (or batch) a client may send,
// however it arrives: each request of a longer stdio line is refused with
// -32600 by the stdio loop, whatever serves the client (in process, alone, or
// through a bridge), and a larger POST body is refused by the HTTP server
// (413). One limit, so that every session answers the same message the
// same way (docs/security.md#bounded).
const MaxMessageBytes = 1 << 20

// maxBatchAnswerBytes bounds what a batch's answers gather, however it
// arrives: an answer may be a hundred times its member (a tools/list of 47
// bytes answers 4.6 KB), and a shared server that answered a batch of
// 1 MiB whole held 100 MB of answers and grew to 640 MB. Once the answers
// reach it, the batch's further members are not run, in every session
// alike (docs/security.md#bounded).
const maxBatchAnswerBytes = 16 << 20

// GatherEach answers msg's members in turn with answer (given each one's
// index), and gathers their answers as Gather does; false as soon as
// answer says so. Once the answers reach maxBatchAnswerBytes the members
// left are not run: a request gets -32600, anything else nothing. Those
// refusals are bounded too (a 16 MiB line of 21-byte requests would get
// 128 MB of them): once the answers reach twice the bound, the members
// left get nothing.
func GatherEach(msg json.RawMessage, answer func(i int, member json.RawMessage) ([]byte, bool)) ([]byte, bool) {
	var answers [][]byte
	gathered := 0
	for i, m := range eachMember(msg) {
		a, ok := []byte(nil), true
		if gathered < maxBatchAnswerBytes {
			a, ok = answer(i, m)
		} else if gathered >= 2*maxBatchAnswerBytes {
			break
		} else if env, _ := ReadEnvelope(m); env.IsRequest() && scalarID(env.ID) {
			a = ErrorFrame(env.ID, mcp.INVALID_REQUEST, fmt.Sprintf(
				"invalid request: not run: the batch's answers before it reached %d bytes; send it again in a later message", maxBatchAnswerBytes))
		}
		if !ok {
			return nil, false
		}
		if a != nil { // else a notification, which is owed nothing
			answers, gathered = append(answers, a), gathered+len(a)
		}
	}
	return Gather(msg, answers), true
}
