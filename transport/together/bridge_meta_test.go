package together

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// What carries a 2026-07-28 client's session (its history given late,
// here, with the _meta carried from before) leaves the session the bridge
// would carry on as the client's own last message named it.
func TestACarryingMessagesMetaIsNotTheClientsOwn(t *testing.T) {
	f := newFixture()
	s := serveHTTP(t, httpserver.Config{MCP: f.srv})
	before := json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"before","version":"1"}}`)
	var b *bridge.Bridge
	c := runStdio(t, func(out *wire.FrameWriter) wire.Backend {
		var err error
		b, err = bridge.New(context.Background(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: s.url, Out: out,
			NewPeer: func() string { return "p7" }, Carried: carry.Session{Meta: before}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	})
	c.send(modernRequest(1, "tools/list", "")) // named "modern"
	c.answer("1")
	// the fixture's server has no majordomus_executions: what matters is
	// what the bridge made of the message's _meta
	_ = carry.GiveHistory(context.Background(), b, before, json.RawMessage(`[]`))
	b.Close()
	_, err := b.Relay(context.Background(), json.RawMessage(modernRequest(2, "tools/list", "")))
	var g *bridge.Gone
	if !errors.As(err, &g) || !strings.Contains(string(g.Session.Meta), `"modern"`) {
		t.Fatalf("the session carried on: %v", err)
	}
}
