package bridge

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// provenDialer dials the shared server at base for a bridge, and on each
// new connection, before anything else is written to it, has the server
// prove that it holds the lease's secret (docs/security.md). A process
// that took a dead server's port is then never sent a client's message,
// and nothing it says reaches the client. A failed proof is the dial's
// error: what was to be sent provably did not run, so it may go elsewhere
// (see neverConnected).
func provenDialer(base, key string, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		_, conn, err := secret.Probe(ctx, base, key, timeout)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: fmt.Errorf("the server did not prove it holds the lease's secret: %w", err)}
		}
		return conn, nil
	}
}
