package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// Screen answers a single message mcp-go would answer leniently, or not
// before its session initialized: what is not a JSON object, a message
// without "jsonrpc":"2.0", a request
// whose id is null (mcp-go takes it for a notification and answers
// nothing; MCP forbids null ids) or neither a string nor a number (an
// object, an array, a boolean: mcp-go echoes it), params that are not an object (mcp-go
// answers -32600 for a tools/call), an initialize without params (mcp-go
// answers it with a default revision), a tools/call, prompts/get or
// resources/read that does not name what it is about, a method that is not
// a string or is empty, an id with neither a method nor a result or an
// error (a bridge would take each for an answer, and answer nothing), a
// numeric id that comes back changed (mcp-go reads one as a float64, and
// would answer 2^53+1 as 2^53, which may be another request of its client),
// or a string id that does (see exactString); and a notification whose
// params are not an object is answered nothing. It reports false when
// mcp-go may have msg.
func Screen(msg json.RawMessage) (answer []byte, screened bool) {
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if !isObject(msg) {
		return ErrorFrame(nil, mcp.INVALID_REQUEST, "invalid request: a message must be a JSON object"), true
	}
	absent := func(v json.RawMessage) bool { return len(v) == 0 || string(v) == "null" }
	var method, version string
	if json.Unmarshal(msg, &m) != nil {
		return nil, false // not a message: as before
	}
	if params := bytes.TrimSpace(m.Params); len(m.ID) == 0 && len(m.Method) > 0 && !absent(params) && params[0] != '{' {
		// A notification mcp-go could not read: it would answer -32700
		// with a null id, which its client can match to no request, and
		// JSON-RPC answers no notification.
		return nil, true
	}
	if len(m.ID) > 0 && !scalarID(m.ID) && !absent(bytes.TrimSpace(m.ID)) {
		if absent(m.Method) && (!absent(m.Result) || !absent(m.Error)) {
			return nil, false // an answer to a server request: answered nothing
		}
		return ErrorFrame(nil, mcp.INVALID_REQUEST, "invalid request: a request's id is a string or a number"), true
	}
	switch {
	case absent(m.Method) && (len(m.ID) == 0 || len(m.Result) > 0 || len(m.Error) > 0):
		return nil, false // an answer to a server request: answered nothing
	case absent(m.Method):
		return ErrorFrame(m.ID, mcp.INVALID_REQUEST, "invalid request: a message with an id has a method, or a result or an error"), true
	case json.Unmarshal(m.Method, &method) != nil:
		return ErrorFrame(m.ID, mcp.INVALID_REQUEST, "invalid request: the method must be a string"), true
	case json.Unmarshal(m.JSONRPC, &version) != nil || version != "2.0":
		// mcp-go's words, here so that a session that did not initialize
		// says them too
		return ErrorFrame(m.ID, mcp.INVALID_REQUEST, "Invalid JSON-RPC version"), true
	case method == "" && !absent(m.ID):
		return ErrorFrame(m.ID, mcp.METHOD_NOT_FOUND, "method not found: a request names its method"), true
	}
	if string(m.ID) == "null" {
		return ErrorFrame(nil, mcp.INVALID_REQUEST, "invalid request: the id is null; a request's id is a string or a number, a notification has none"), true
	}
	if len(m.ID) == 0 {
		return nil, false // a notification is answered nothing
	}
	if !heldExactly(m.ID) {
		return ErrorFrame(m.ID, mcp.INVALID_REQUEST, "invalid request: a numeric id is an integer within ±2^53 (9007199254740992), or a fraction a double holds; a string id may be anything"), true
	}
	if !exactString(m.ID) {
		return ErrorFrame(m.ID, mcp.INVALID_REQUEST, "invalid request: a string id is Unicode text: no lone surrogate, no invalid UTF-8"), true
	}
	params := bytes.TrimSpace(m.Params)
	switch {
	case !absent(params) && params[0] != '{':
		return ErrorFrame(m.ID, mcp.INVALID_PARAMS, "invalid params: params must be an object"), true
	case absent(params) && method == string(mcp.MethodInitialize):
		return ErrorFrame(m.ID, mcp.INVALID_PARAMS, "invalid params: initialize takes params: protocolVersion, capabilities and clientInfo"), true
	}
	if typed, ok := typedParams[method]; ok && !absent(params) {
		if why := typeMismatch(json.Unmarshal(params, typed())); why != "" {
			return ErrorFrame(m.ID, mcp.INVALID_PARAMS, "invalid params: "+why), true // mcp-go: -32600, in Go's words
		}
	}
	if field, ok := namedBy[method]; ok {
		// Read as mcp-go reads it (its key in any case, the last of
		// duplicates). Over HTTP, 2026-07-28 would refuse it for its empty
		// Mcp-Name header (-32020), which a local session has none of.
		if name, ok := mcp.ExtractHeaderName(mcp.MCPMethod(method), params); !ok || name == "" {
			return ErrorFrame(m.ID, mcp.INVALID_PARAMS, "invalid params: "+method+" names what it is about in params."+field), true
		}
	}
	return nil, false
}

// Unreadable answers, as Screen would, a message Screen passed whose
// envelope (env, err: ReadEnvelope's) still does not read: an object where
// an earlier copy of its method or jsonrpc key is not a string
// ("method":5 beside "method":"ping"), which Screen, reading the last
// copy, cannot see, and mcp-go could not read (it would answer -32700 with
// a null id). A request's client waits on its id all the same: it is
// told; a notification, or the client's answer to a request of the
// server's, is answered nothing. It reports false when env read.
func Unreadable(env Envelope, err error) (answer []byte, screened bool) {
	switch {
	case err == nil:
		return nil, false
	case env.IsRequest(): // the method's last copy, which Screen read, is a string
		return ErrorFrame(env.ID, mcp.INVALID_REQUEST, "invalid request: the method and jsonrpc are strings, each given once"), true
	}
	return nil, true
}

// heldExactly reports whether a client reads id back from mcp-go as it
// sent it: mcp-go holds a numeric id as a float64, which a fraction's
// sender reads back as the float64 it sent, and a whole number from ±2^53
// on (9007199254740993, 9007199254740993.0, 9.007199254740993e15) may
// come back as another.
func heldExactly(id json.RawMessage) bool {
	lit := string(bytes.TrimSpace(id))
	if lit == "" || lit[0] != '-' && (lit[0] < '0' || lit[0] > '9') {
		return true // not a number
	}
	if strings.ContainsAny(lit, ".eE") { // mcp-go answers a whole one as an integer
		f, err := strconv.ParseFloat(lit, 64)
		return err == nil && (f != math.Trunc(f) || math.Abs(f) < 1<<53)
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	return err == nil && -1<<53 <= n && n <= 1<<53
}

// exactString reports whether a client reads the JSON string lit back as
// it sent it: Go reads invalid UTF-8 and a lone surrogate (\ud800) as
// U+FFFD, so such an id would come back another. True for what is not a
// string.
func exactString(lit []byte) bool {
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && n == 1 {
				return false
			}
			i += n - 1
			continue
		case c != '\\':
			continue
		case i+5 >= len(lit) || lit[i+1] != 'u':
			i++ // past the character escaped (a quote, a backslash)
			continue
		}
		r, _ := strconv.ParseUint(string(lit[i+2:i+6]), 16, 32)
		i += 5
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return false // a low half alone
		case 0xD800 <= r && r <= 0xDBFF:
			if i+6 >= len(lit) || lit[i+1] != '\\' || lit[i+2] != 'u' {
				return false
			}
			lo, _ := strconv.ParseUint(string(lit[i+3:i+7]), 16, 32)
			if lo < 0xDC00 || lo > 0xDFFF {
				return false
			}
			i += 6
		}
	}
	return true
}

// namedBy is the param that names what a request is about: over HTTP,
// 2026-07-28 carries it in the Mcp-Name header too.
var namedBy = map[string]string{
	string(mcp.MethodToolsCall):     "name",
	string(mcp.MethodPromptsGet):    "name",
	string(mcp.MethodResourcesRead): "uri",
}

// typedParams are the params of the methods whose values have types that
// mcp-go reads without a word of its own: a value of another type would be
// refused as an unparsable request (-32600), in Go's words.
var typedParams = map[string]func() any{
	string(mcp.MethodPromptsGet):           func() any { return new(mcp.GetPromptParams) },
	string(mcp.MethodResourcesSubscribe):   func() any { return new(mcp.SubscribeParams) },
	string(mcp.MethodResourcesUnsubscribe): func() any { return new(mcp.UnsubscribeParams) },
	string(mcp.MethodCompletionComplete):   func() any { return new(mcp.CompleteParams) },
}

// typeMismatch says which value of params has a type its method does not
// take, or "" when err is no such mismatch.
func typeMismatch(err error) string {
	var bad *json.UnmarshalTypeError
	if !errors.As(err, &bad) {
		return ""
	}
	want := "a " + bad.Type.Kind().String()
	switch bad.Type.Kind() {
	case reflect.Map, reflect.Struct:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Int, reflect.Int64, reflect.Float64:
		want = "a number"
	}
	field := strings.ReplaceAll(bad.Field, "Alias.", "") // a type that decodes itself through an alias
	held := "a " + bad.Value
	if bad.Value == "array" || bad.Value == "object" {
		held = "an " + bad.Value
	}
	return fmt.Sprintf("params.%s holds %s where %s is taken", field, held, want)
}

// RefusedBatch answers a batch no server takes: one holding a 2026-07-28
// message (that revision has no batches) or an initialize (which opens a
// session, so it comes alone). Every request in it gets -32600. Nil for
// any other message.
func RefusedBatch(msg json.RawMessage) []byte {
	members, batch := SplitBatch(msg)
	if !batch {
		return nil
	}
	text := ""
	for _, m := range members {
		var c struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(m, &c)
		if _, version := MetaOf(c.Params); mcp.IsModernProtocol(version) {
			text = "invalid request: 2026-07-28 has no batches: send each message alone"
			break
		}
		if c.Method == string(mcp.MethodInitialize) {
			text = "invalid request: initialize must be sent alone, not in a batch"
		}
	}
	if text == "" {
		return nil
	}
	return RefuseEach(msg, mcp.INVALID_REQUEST, text)
}

// Unopened answers msg, a message of a session that has not initialized
// (one message or a batch), when each of its requests is a legacy one
// other than initialize: what [Screen] refuses is refused, ping is
// answered {} (the lifecycle allows it before initialize), any other
// request -32600 saying initialize comes first, and what is not a request
// gets nothing. It reports false when msg
// holds no request, or an initialize or a 2026-07-28 request (it carries its revision in
// _meta): those go on as they would.
func Unopened(msg json.RawMessage) ([]byte, bool) {
	answer, ok := GatherEach(msg, func(_ int, m json.RawMessage) ([]byte, bool) {
		if refusal, ok := Screen(m); ok {
			return refusal, true
		}
		var c struct {
			Envelope
			Params json.RawMessage `json:"params"`
		}
		err := json.Unmarshal(m, &c)
		if refusal, ok := Unreadable(c.Envelope, err); ok {
			return refusal, true
		}
		_, version := MetaOf(c.Params)
		switch {
		case c.Method == string(mcp.MethodInitialize), mcp.IsModernProtocol(version):
			return nil, false
		case !c.IsRequest():
			return nil, true
		case c.Method == string(mcp.MethodPing):
			b, _ := json.Marshal(struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  struct{}        `json:"result"`
			}{JSONRPC: "2.0", ID: c.ID})
			return b, true
		}
		return ErrorFrame(c.ID, mcp.INVALID_REQUEST, "invalid request: "+c.Method+
			" before initialize: initialize first (a 2026-07-28 request carries its revision in _meta instead)"), true
	})
	return answer, ok && answer != nil // nothing asks for an answer: it goes on as it would
}

// UnknownRevision answers, as mcp-go's HTTP transport answers it (-32022
// with the revisions it serves), a request env of msg whose _meta names a
// 2026-07-28-or-later revision mcp-go does not know. Over HTTP that is
// refused before the request is read further; in process mcp-go first asks
// for the client capabilities, and would refuse a request without them
// -32602 instead. Nil for any other message.
func UnknownRevision(env Envelope, msg json.RawMessage) []byte {
	if !env.IsRequest() || !MayHold(msg, mcp.MetaKeyProtocolVersion) {
		return nil
	}
	_, version := MetaOf(ParamsOf(msg))
	if !mcp.IsModernProtocol(version) || mcp.IsValidProtocolVersion(version) {
		return nil
	}
	var id any
	_ = json.Unmarshal(env.ID, &id) // as mcp-go reads it
	answer := mcp.UnsupportedProtocolVersionError{Version: version, Supported: mcp.ValidProtocolVersions}.JSONRPCError()
	answer.ID = mcp.NewRequestId(id)
	b, _ := json.Marshal(answer)
	return b
}
