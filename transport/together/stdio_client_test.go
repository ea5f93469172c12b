package together

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// stdioClient is an MCP client on the far side of a real stdio loop.
type stdioClient struct {
	t       *testing.T
	in      *io.PipeWriter
	frames  chan string
	ending  chan stdio.Ending
	done    chan struct{}
	once    sync.Once
	backlog []string // frames read but not yet asked for
	backend wire.Backend
}

// runStdio runs a stdio loop over pipes with the backend made by mk.
func runStdio(t *testing.T, mk func(out *wire.FrameWriter) wire.Backend) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: inW, frames: make(chan string, 256), ending: make(chan stdio.Ending, 1), done: make(chan struct{})}
	out := wire.NewFrameWriter(outW)
	backend := mk(out)
	c.backend = backend
	go func() {
		for l := range bufioLines(outR) {
			select {
			case c.frames <- l:
			case <-c.done:
			}
		}
	}()
	go func() {
		loop := stdio.Loop{In: inR, Out: out, Backend: backend}
		c.ending <- loop.Serve(context.Background())
	}()
	t.Cleanup(func() {
		c.close()
		if c, ok := backend.(interface{ Close() }); ok {
			c.Close()
		}
		close(c.done)
		outW.Close()
	})
	return c
}

func (c *stdioClient) send(lines ...string) {
	c.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(c.in, l+"\n"); err != nil {
			c.t.Fatalf("writing %q: %v", l, err)
		}
	}
}

// until returns the first frame for which ok holds, and the frames read
// before it, which stay in the backlog for later calls.
func (c *stdioClient) until(ok func(string) bool) (string, []string) {
	c.t.Helper()
	for i, f := range c.backlog {
		if ok(f) {
			before := append([]string(nil), c.backlog[:i]...)
			c.backlog = append(c.backlog[:i], c.backlog[i+1:]...)
			return f, before
		}
	}
	before := append([]string(nil), c.backlog...)
	deadline := time.After(wait)
	for {
		select {
		case f := <-c.frames:
			if ok(f) {
				return f, before
			}
			before = append(before, f)
			c.backlog = append(c.backlog, f)
		case <-deadline:
			c.t.Fatalf("no such frame within %s; read %v", wait, before)
		}
	}
}

// listChanged broadcasts notifications/resources/list_changed until every
// client has seen one. mcp-go can lose a notification sent just after a POST
// of the session ended (the POST's forwarder may still take it, then drop
// it), so one send is not enough to wait on.
func listChanged(t *testing.T, f *fixture, clients ...*stdioClient) {
	t.Helper()
	seen := make([]bool, len(clients))
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		f.srv.SendNotificationToAllClients("notifications/resources/list_changed", nil)
		pending := false
		for i, c := range clients {
			if !seen[i] {
				seen[i] = c.within(200*time.Millisecond, func(f string) bool { return strings.Contains(f, "list_changed") })
				pending = pending || !seen[i]
			}
		}
		if !pending {
			return
		}
	}
	t.Fatal("no client saw list_changed")
}

// within reports whether a frame for which ok holds arrives within d; it
// is taken, the others stay in the backlog.
func (c *stdioClient) within(d time.Duration, ok func(string) bool) bool {
	for i, f := range c.backlog {
		if ok(f) {
			c.backlog = append(c.backlog[:i], c.backlog[i+1:]...)
			return true
		}
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case f := <-c.frames:
			if ok(f) {
				return true
			}
			c.backlog = append(c.backlog, f)
		case <-timer.C:
			return false
		}
	}
}

// answer returns the answer to request id (a JSON literal), and the frames before it.
func (c *stdioClient) answer(id string) (string, []string) {
	c.t.Helper()
	return c.until(func(f string) bool {
		return strings.Contains(f, `"id":`+id+`,"result"`) || strings.Contains(f, `"id":`+id+`,"error"`)
	})
}

// call sends a request and returns its answer.
func (c *stdioClient) call(id, method, params string) string {
	c.t.Helper()
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `"`
	if params != "" {
		line += `,"params":` + params
	}
	c.send(line + "}")
	a, _ := c.answer(id)
	return a
}

// open initializes the session the way a host does. A bridge is told
// notifications/initialized directly, as the loop would tell it, so that
// the server has taken it when open returns: a test that stops the server
// next does not cut it off in flight.
func (c *stdioClient) open(init string) string {
	c.t.Helper()
	c.send(init)
	a, _ := c.answer("1")
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	switch c.backend.(type) {
	case *bridge.Bridge, *failovers:
		c.backend.Handle(c.t.Context(), json.RawMessage(initialized))
	default:
		c.send(initialized)
	}
	return a
}

func (c *stdioClient) close() {
	c.once.Do(func() {
		c.in.Close()
		select {
		case <-c.ending:
		case <-time.After(wait):
			c.t.Error("the stdio loop did not end")
		}
	})
}

// localTo makes a backend maker for a session in process on f's server.
func localTo(t *testing.T, f *fixture) func(*wire.FrameWriter) wire.Backend {
	return func(out *wire.FrameWriter) wire.Backend {
		l, err := stdio.NewLocal(context.Background(), f.srv, out, "stdio")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

// bridgeTo makes a backend maker for a bridge to url.
func bridgeTo(t *testing.T, url string, log *zap.Logger) func(*wire.FrameWriter) wire.Backend {
	return func(out *wire.FrameWriter) wire.Backend {
		b, err := bridge.New(t.Context(), bridge.Config{Secret: testSecret, ProbeTimeout: testProbe, URL: url, Out: out, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
