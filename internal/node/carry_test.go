package node

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A carried announcement the server refuses (over the bounds this version
// keeps, made under an earlier one) stays behind: the session is carried
// all the same, under its peer id, without it.
func TestACarriedAnnouncementOverTheBoundsIsLeftBehind(t *testing.T) {
	co := exampleCheckout(t)
	t.Cleanup(co.unwatched)
	srv, err := co.load(t.Context(), func() surface.Process { return surface.Process{} }, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	local, err := stdio.NewLocal(t.Context(), srv.surface.MCP, wire.NewFrameWriter(io.Discard), localSession)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	scope := make([]string, 101)
	for i := range scope {
		scope[i] = fmt.Sprintf("lib/%d", i)
	}
	announce, _ := json.Marshal(map[string]any{"intent": "carried", "scope": scope})
	c := carry.Session{
		Initialize: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}`),
		Peer:       "p3",
		Announce:   announce,
	}
	if err := c.Replay(t.Context(), local); err != nil {
		t.Fatalf("the session was not carried: %v", err)
	}
	if peers, _ := srv.surface.Board.Peers(); len(peers) != 1 || peers[0].ID != "p3" || peers[0].Announcement != nil {
		t.Fatalf("the board: %+v", peers)
	}
}
