package together

import (
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// modernMeta is the _meta of a 2026-07-28 request.
const modernMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// A 2026-07-28 request within the size limit may be refused with an answer
// over it: mcp-go writes '<' as \u003c, six bytes for one, and its refusal
// names what the request named. A bridge relays that answer whole, as a
// local session writes it (R8), not as the server's refusal cut at 1 MiB.
func TestAModernRefusalOverTheSizeLimitIsRelayedWhole(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	for i, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + strings.Repeat("<", 200000) + `",` + modernMeta + `}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"` + strings.Repeat("<", 200000) + `",` + modernMeta + `}}`,
	} {
		if len(line) > wire.MaxMessageBytes {
			t.Fatalf("case %d is over the limit itself", i)
		}
		id := string(rune('1' + i))
		bridged.send(line)
		local.send(line)
		b, _ := bridged.answer(id)
		l, _ := local.answer(id)
		if len(l) <= wire.MaxMessageBytes || !strings.Contains(l, `"code":-32602`) {
			t.Fatalf("case %d: the local answer is %d bytes, %.100s…; want a -32602 over the limit", i, len(l), l)
		}
		if b != l {
			t.Errorf("case %d: bridged (%d bytes) %.160s…\nlocal (%d bytes) %.160s…", i, len(b), b, len(l), l)
		}
	}
}

// A 2026-07-28 request naming a revision no server knows, without the
// client capabilities that revision requires, is answered the same by a
// bridged and a local session (R8), before and after a legacy initialize:
// over HTTP mcp-go refuses the revision (-32022) before it reads the
// capabilities.
func TestAnUnknownRevisionWithoutCapabilitiesIsAnsweredAsLocally(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	compare := func(id string) {
		t.Helper()
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}`
		bridged.send(line)
		local.send(line)
		b, _ := bridged.answer(id)
		l, _ := local.answer(id)
		if b != l {
			t.Errorf("id %s:\nbridged %s\nlocal   %s", id, b, l)
		}
	}
	compare("2")
	for _, c := range []*stdioClient{bridged, local} {
		c.open(initRoots)
	}
	compare("3")
}

// A 2026-07-28 request whose method, or revision, is longer than a
// request's head may carry is answered by a bridged session as by a local
// one (R8): the bridge sends it with NamesInBody, as it sends a long tool
// name, not in a header the server refuses (431).
func TestAModernMethodOrRevisionTooLongForAHeaderIsAnsweredAsLocally(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	bridged := runStdio(t, bridgeTo(t, s.url, nil))
	local := runStdio(t, localTo(t, f))
	long := strings.Repeat("x", 100000)
	for id, line := range map[string]string{
		"4": `{"jsonrpc":"2.0","id":4,"method":"tools/` + long + `","params":{` + modernMeta + `}}`,
		"5": `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28` + long + `","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		bridged.send(line)
		local.send(line)
		b, _ := bridged.answer(id)
		l, _ := local.answer(id)
		if b != l {
			t.Errorf("id %s:\nbridged %.200s\nlocal   %.200s", id, b, l)
		}
	}
}
