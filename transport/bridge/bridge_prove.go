package bridge

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// provenDialer dials the shared server for a bridge, and on each new
// connection, before anything else is written to it, has the server prove
// that it holds the lease's secret (docs/security.md). A process that took
// a dead server's port is then never sent a client's message, and nothing
// it says reaches the client. A failed proof is the dial's error: what was
// to be sent provably did not run, so it may go elsewhere (see
// neverConnected).
type provenDialer struct {
	dialer  net.Dialer
	host    string // the server, as a Host header names it
	key     string // the lease's secret
	timeout time.Duration
}

func newProvenDialer(host, key string, timeout time.Duration) *provenDialer {
	return &provenDialer{dialer: net.Dialer{Timeout: timeout}, host: host, key: key, timeout: timeout}
}

// DialContext dials addr and returns the connection once the server at
// its other end proved it holds the secret, with nothing left unread.
func (d *provenDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(d.timeout))
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	br := bufio.NewReaderSize(secret.AnswerReader(conn), 4096)
	_, err = secret.Prove(conn, br, d.host, d.key)
	if err == nil && br.Buffered() > 0 {
		err = errors.New("it said more than its proof")
	}
	if !stop() || ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		conn.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Addr: conn.RemoteAddr(),
			Err: fmt.Errorf("the server did not prove it holds the lease's secret: %w", err)}
	}
	_ = conn.SetDeadline(time.Time{})
	return conn, nil
}
