package node

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// The leaseholder's own 2026-07-28 client, whose every request sights its
// peer, moves no board page's change stream by asking: only its last_seen
// changes, which the board shows as of each reading.
func TestTheLeaseholdersOwn20260728ClientAskingLeavesTheBoardsRevision(t *testing.T) {
	meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"a","version":"1"}}`
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	s := a.node.session
	first := json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta[1:] + `}}`)
	if answer := s.Handle(context.Background(), first); !bytes.Contains(answer, []byte(`"result"`)) {
		t.Fatalf("answered %s", answer)
	}
	a.awaitLog("shared server listening")
	srv, err := a.node.load()
	if err != nil {
		t.Fatal(err)
	}
	src := newBoardSource(srv.surface, a.node.State)
	before, changed := src.Changes()
	for i := 2; i < 5; i++ {
		msg := json.RawMessage(`{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"tools/list","params":{` + meta[1:] + `}}`)
		if answer := s.Handle(context.Background(), msg); !bytes.Contains(answer, []byte(`"result"`)) {
			t.Fatalf("answered %s", answer)
		}
	}
	select {
	case <-changed:
		after, _ := src.Changes()
		t.Fatalf("the own 2026-07-28 client's lists moved the board's revision from %s to %s", before, after)
	default:
	}
}
