package bridge

import (
	"io"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A server whose port refuses connections is gone (its process ended: on
// Windows, TerminateProcess), and the sessions left on it with it: a
// bridge that left one there does not try again to end it, every second
// until the idle timeout. (It did on Windows, whose refusal is
// WSAECONNREFUSED, which syscall.ECONNREFUSED is not.)
func TestARefusingServerHasNoSessionLeftToEnd(t *testing.T) {
	ln, err := httpserver.Listen("127.0.0.1", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httpserver.URLOf(ln.Addr())
	ln.Close() // nothing listens there now
	b, err := New(t.Context(), Config{URL: url, Secret: secret.New(), ProbeTimeout: 5 * time.Second,
		Out: wire.NewFrameWriter(io.Discard), Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	if !b.endSession("a-session-left-there", "2025-06-18", 5*time.Second) {
		t.Error("a session left on a server that refuses connections is still to be ended there")
	}
}
