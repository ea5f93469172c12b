package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A session carried onto a bridge with the generation its client was told
// (carry.Session.Generation) carries it on when the bridge goes, though
// the client was told nothing since: what serves it after goes on past
// it, a server alone included, whatever server the session crosses.
func TestTheGenerationToldIsCarriedOnFromABridge(t *testing.T) {
	b, err := New(context.Background(), Config{URL: "http://127.0.0.1:9", Out: wire.NewFrameWriter(io.Discard), ProbeTimeout: time.Second,
		Carried: carry.Session{Peer: "p3", Generation: 7}})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	_, err = b.Relay(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	var g *Gone
	if !errors.As(err, &g) {
		t.Fatalf("a closed bridge relayed: %v", err)
	}
	if g.Session.Peer != "p3" || g.Session.Generation != 7 {
		t.Fatalf("the session carried on from the bridge: peer %q, generation %d; want p3, 7", g.Session.Peer, g.Session.Generation)
	}
}
