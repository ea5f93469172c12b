package bridge

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// connCounter serves POSTs by echoing their bodies, and counts the
// connections it was given.
type connCounter struct {
	*httptest.Server
	mu    sync.Mutex
	conns int
}

func newConnCounter(t *testing.T, handler http.HandlerFunc) *connCounter {
	c := &connCounter{}
	c.Server = httptest.NewUnstartedServer(handler)
	c.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			c.mu.Lock()
			c.conns++
			c.mu.Unlock()
		}
	}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

func (c *connCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// postOnce sends body and returns the answer's body.
func postOnce(t *testing.T, p *poster, body string, resendable bool) string {
	t.Helper()
	resp, done, err := p.post(context.Background(), []byte(body), http.Header{}, resendable)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	done(err == nil)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResendableMessagesShareAConnection(t *testing.T) {
	s := newConnCounter(t, echo)
	p := plainPoster(t, s.URL+"/mcp")
	for i := range 5 {
		if a := postOnce(t, p, `{"n":`+strconv.Itoa(i)+`}`, true); a != `{"n":`+strconv.Itoa(i)+`}` {
			t.Fatalf("answered %s", a)
		}
	}
	if n := s.count(); n != 1 {
		t.Fatalf("%d connections for 5 resendable messages, want 1", n)
	}
}

func TestAMessageThatMustNotRunTwiceGetsAConnectionOfItsOwn(t *testing.T) {
	s := newConnCounter(t, echo)
	p := plainPoster(t, s.URL+"/mcp")
	postOnce(t, p, `{"first":true}`, true)
	for range 3 {
		postOnce(t, p, `{"unsafe":true}`, false)
	}
	if n := s.count(); n != 4 {
		t.Fatalf("%d connections, want 4: one kept, and one for each message that must not run twice", n)
	}
}

func TestAKeptConnectionTheServerClosedIsReplacedUnseen(t *testing.T) {
	s := newConnCounter(t, echo)
	p := plainPoster(t, s.URL+"/mcp")
	postOnce(t, p, `{"n":1}`, true)
	s.CloseClientConnections() // the server drops the kept connection
	if a := postOnce(t, p, `{"n":2}`, true); a != `{"n":2}` {
		t.Fatalf("answered %s", a)
	}
	if n := s.count(); n != 2 {
		t.Fatalf("%d connections, want 2", n)
	}
}

func TestARefusedDialProvesNothingWasSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	p := plainPoster(t, url)
	_, _, err = p.post(context.Background(), []byte(`{}`), http.Header{}, false)
	if err == nil || !neverConnected(err) {
		t.Fatalf("post to a closed port: %v, want a refused dial", err)
	}
}

func TestAnEndedContextBreaksAnAnswerUnderWay(t *testing.T) {
	release := make(chan struct{})
	s := newConnCounter(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	p := plainPoster(t, s.URL+"/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	resp, done, err := p.post(ctx, []byte(`{}`), http.Header{}, true)
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(resp.Body)
		read <- err
	}()
	cancel()
	select {
	case err := <-read:
		if err == nil {
			t.Fatal("the answer ended cleanly after its context ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the answer went on after its context ended")
	}
	done(false)
	if len(p.idle) != 0 {
		t.Fatal("a broken connection was kept")
	}
}

// plainPoster posts to endpoint on plain connections: these tests are
// about connections, not about the proof each new one asks for.
func plainPoster(t *testing.T, endpoint string) *poster {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var d net.Dialer
	return &poster{endpoint: endpoint, dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, u.Host)
	}}
}
