package bridge

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/rawio"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// poster sends a bridge's POSTs over HTTP/1.1 connections it keeps itself,
// each request written and its answer read by the goroutine that sends it.
//
// net/http's Transport hands every request to two goroutines of its own,
// one that writes and one that reads; on a relay whose whole job is one
// request per message those hand-offs cost more than the relay (B2). The
// bridge needs nothing of HTTP but POSTs to one loopback address, and
// net/http's own request writer and response reader.
//
// Only a message that may be sent twice goes on a kept connection: a kept
// connection may have been closed by a server that stopped, and whether
// the server read what was written to it cannot be known. Such a message
// is sent once more on a new connection when a kept one ends before any
// byte of an answer. Any other message gets a new connection, so that a
// refused dial proves that it did not run.
type poster struct {
	endpoint string
	dial     func(ctx context.Context, network, addr string) (net.Conn, error) // it knows the address

	mu   sync.Mutex
	idle []*keptConn // most recently used last
}

const (
	// keptIdle is how long a connection is kept unused: well inside the
	// server's own idle timeout (two minutes), so that the server does not
	// close it under a message.
	keptIdle = 30 * time.Second
	// keptMax bounds the idle connections kept: more than one is needed
	// only while several messages are under way at once.
	keptMax = 4
)

// post sends body with header and returns the answer. The caller reads the
// answer's body and then calls done, saying whether it read it to its end;
// the connection is kept only then. A dial's error is returned as it is
// (see neverConnected).
func (p *poster) post(ctx context.Context, body []byte, header http.Header, resendable bool) (*http.Response, func(readToEnd bool), error) {
	for attempt := 0; ; attempt++ {
		c, reused, err := p.conn(ctx, resendable && attempt == 0)
		if err != nil {
			return nil, nil, err
		}
		resp, err := c.roundTrip(ctx, p.endpoint, body, header)
		if err == nil {
			return resp, func(readToEnd bool) { p.release(c, readToEnd && !resp.Close) }, nil
		}
		c.stopWatch()
		c.Close()
		if reused && c.read == 0 && ctx.Err() == nil {
			continue // the server had closed the kept connection: once more on a new one
		}
		return nil, nil, err
	}
}

// conn returns a kept connection when reuse allows one, else a new one.
func (p *poster) conn(ctx context.Context, reuse bool) (*keptConn, bool, error) {
	if reuse {
		p.mu.Lock()
		for len(p.idle) > 0 {
			c := p.idle[len(p.idle)-1]
			p.idle = p.idle[:len(p.idle)-1]
			if time.Since(c.since) < keptIdle {
				p.mu.Unlock()
				return c, true, nil
			}
			c.Close()
		}
		p.mu.Unlock()
	}
	conn, err := p.dial(ctx, "tcp", "")
	if err != nil {
		return nil, false, err
	}
	return kept(conn), false, nil
}

// kept is conn, ready to carry POSTs.
func kept(conn net.Conn) *keptConn {
	c := &keptConn{Conn: rawio.Conn(conn)}
	c.br = bufio.NewReader(c)
	c.bw = bufio.NewWriter(c.Conn)
	return c
}

// release keeps c for the next message, or closes it.
func (p *poster) release(c *keptConn, keep bool) {
	if !c.stopWatch() {
		keep = false // the context ended: its deadline broke the connection
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !keep || len(p.idle) >= keptMax {
		c.Close()
		return
	}
	c.since = time.Now()
	p.idle = append(p.idle, c)
}

// closeIdle closes every kept connection: the server may be gone.
func (p *poster) closeIdle() {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.Close()
	}
}

// keptConn is one connection to the server.
type keptConn struct {
	net.Conn
	br    *bufio.Reader
	bw    *bufio.Writer
	read  int64       // bytes read since the current request was written
	since time.Time   // unused since
	watch func() bool // stops the context's watch; false if it fired
}

// Read reads the connection, counting what it reads (read).
func (c *keptConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.read += int64(n)
	return n, err
}

// roundTrip writes one POST and reads the head of its answer. Until the
// caller releases the connection, ctx ending breaks it.
func (c *keptConn) roundTrip(ctx context.Context, endpoint string, body []byte, header http.Header) (*http.Response, error) {
	c.read = 0
	c.watch = context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body)) // New checked the endpoint
	req.Header = header
	if err := req.Write(c.bw); err != nil {
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	return http.ReadResponse(c.br, req)
}

// stopWatch stops watching the request's context; false when it ended.
func (c *keptConn) stopWatch() bool {
	if c.watch == nil {
		return true
	}
	stopped := c.watch()
	c.watch = nil
	return stopped
}

// provenDialer dials the shared server at base for a bridge, and on each
// new connection, before anything else is written to it, has the server
// prove that it holds the lease's secret (docs/security.md). A process
// that took a dead server's port is then never sent a client's message,
// and nothing it says reaches the client. A failed proof is the dial's
// error: what was to be sent provably did not run, so it may go elsewhere
// (see neverConnected). The probe asks for the seal, which proves this
// side holds the secret too: the server then counts the connection its
// owner's, never one closed to make room for a newcomer without the token
// (transport/httpserver), idle though it is until the bridge writes.
func provenDialer(base, key string, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		_, conn, err := secret.ProbeSealed(ctx, base, key, timeout)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network,
				Err: fmt.Errorf("the server did not prove it holds the lease's secret: %w", err)}
		}
		return conn, nil
	}
}
