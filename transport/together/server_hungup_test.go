//go:build unix || windows

package together

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
)

// An initialize whose client hung up before the server read it opens no
// session either, though the server's handling never waits for anything
// that would let net/http hear the hang-up first: a process killed while
// its bridge replayed a session left it open until the idle timeout, and
// the lease-lost server that held it kept its own client from moving on.
// Twenty clients write an initialize and close before the server accepts
// their connections.
func TestAnInitializeWhoseClientHungUpBeforeItWasReadOpensNoSession(t *testing.T) {
	f := newFixture()
	s := hangUpInitializes(t, f, 20, false)
	f.waitRegistered(t, 0)
	if n := s.Sessions(); n != 0 {
		t.Fatalf("%d sessions counted for initializes whose clients hung up", n)
	}
}

// hangUpInitializes has clients write an initialize to a new server of
// f's and close their connections (reset them, when reset) before the
// server accepts them, and returns once the server, having taken and
// answered each, has closed every one.
func hangUpInitializes(t *testing.T, f *fixture, clients int, reset bool) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, gate := make(chan struct{}, clients), make(chan struct{})
	s := serveOn(t, closeTelling{ln.(*net.TCPListener), gate, closed}, httpserver.Config{MCP: f.srv})
	addr := strings.TrimPrefix(s.url, "http://")
	for range clients {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
			addr, secret.Authorization(testSecret), len(initialize), initialize)
		if reset {
			_ = conn.(*net.TCPConn).SetLinger(0) // a reset, as a killed host's
		}
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	close(gate) // the server takes them only now, each hung up
	for range clients {
		<-closed // the server answered it, then found the connection's end
	}
	return s
}

// closeTelling is a listener that accepts nothing before its gate opens,
// and whose connections say when the server closes them; they are TCP
// connections still, whose descriptors can be asked.
type closeTelling struct {
	*net.TCPListener
	gate   <-chan struct{}
	closed chan<- struct{}
}

func (l closeTelling) Accept() (net.Conn, error) {
	<-l.gate
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	return &tellingConn{TCPConn: c, closed: l.closed}, nil
}

type tellingConn struct {
	*net.TCPConn
	once   sync.Once
	closed chan<- struct{}
}

func (c *tellingConn) Close() error {
	c.once.Do(func() { c.closed <- struct{}{} })
	return c.TCPConn.Close()
}
