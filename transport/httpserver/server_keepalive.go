package httpserver

import (
	"net/http"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// DefaultListenKeepAlive is how long a 2026-07-28 listen stream stays
// silent before the server writes a comment on it: that revision's
// liveness for a client that only listens.
const DefaultListenKeepAlive = 15 * time.Second

// keptAlive is a listen stream's writer: once mcp-go has opened the
// stream (an event stream, 200), it is never silent for longer than the
// interval: a comment is written when nothing else was. mcp-go writes each
// event in one Write, so a comment between two writes never splits one.
type keptAlive struct {
	http.ResponseWriter
	mu    sync.Mutex
	open  bool      // the event stream's head is written
	wrote time.Time // when something was last written
	ended bool
	timer *time.Timer
}

// keepAlive wraps w for a listen stream until the returned func is called.
func keepAlive(w http.ResponseWriter, every time.Duration) (*keptAlive, func()) {
	k := &keptAlive{ResponseWriter: w, wrote: time.Now()}
	k.timer = time.AfterFunc(every, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.ended {
			return
		}
		if silent := time.Since(k.wrote); k.open && silent >= every {
			_, _ = k.ResponseWriter.Write([]byte(": keep-alive\n\n"))
			http.NewResponseController(k.ResponseWriter).Flush()
			k.wrote = time.Now()
		}
		k.timer.Reset(max(time.Until(k.wrote.Add(every)), every/10))
	})
	return k, func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		k.ended = true
		k.timer.Stop()
	}
}

func (k *keptAlive) WriteHeader(status int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.open = status == http.StatusOK && wire.IsEventStream(k.Header())
	k.ResponseWriter.WriteHeader(status)
}

func (k *keptAlive) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.wrote = time.Now()
	return k.ResponseWriter.Write(p)
}

func (k *keptAlive) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	http.NewResponseController(k.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (k *keptAlive) Unwrap() http.ResponseWriter { return k.ResponseWriter }
