package wire

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A line of exactly the limit is read, its newline aside, whether or not
// one ends it; a byte more and it is discarded.
func TestALineOfTheLimitIsRead(t *testing.T) {
	for _, tc := range []struct {
		line string
		want int // -1: discarded (nil)
	}{
		{strings.Repeat("x", maxLineBytes), maxLineBytes},
		{strings.Repeat("x", maxLineBytes) + "\n", maxLineBytes},
		{strings.Repeat("x", maxLineBytes+1) + "\n", -1},
		{strings.Repeat("x", maxLineBytes+1), -1},
	} {
		got, _ := ReadLine(bufio.NewReaderSize(strings.NewReader(tc.line), 64<<10))
		if n := len(got); got == nil && tc.want != -1 || got != nil && n != tc.want {
			t.Errorf("a line of %d bytes: read %d (nil %v), want %d", len(tc.line), n, got == nil, tc.want)
		}
	}
}

// The shortcuts that spare decoding a message read it as a decoder does:
// escapes in a method or a key, and keys in another case (Go's decoders,
// mcp-go's among them, match keys so).
func TestAMessageIsReadAsADecoderReadsIt(t *testing.T) {
	for _, msg := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions\/listen","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"subscriptions\u002flisten","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"Method":"subscriptions/listen","params":{}}`,
	} {
		if !IsMethod(json.RawMessage(msg), mcp.MethodSubscriptionsListen) {
			t.Errorf("%s: not read as a listen", msg)
		}
	}
	if IsMethod(json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), mcp.MethodSubscriptionsListen) {
		t.Error("tools/list read as a listen")
	}
	for _, params := range []string{
		`{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_Meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}`,
	} {
		if _, v := MetaOf(json.RawMessage(params)); v != "2026-07-28" {
			t.Errorf("%s: revision %q, want 2026-07-28", params, v)
		}
	}
	if meta, v := MetaOf(json.RawMessage(`{"name":"x"}`)); meta != nil || v != "" {
		t.Errorf("no _meta read as %s %q", meta, v)
	}
}
