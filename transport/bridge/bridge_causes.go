package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// What a bridge can tell of why its server failed, beyond the words: the
// election that follows waits on a full server as it asks, and counts the
// time a silent one was already probed for toward its busy grace
// (docs/design.md#sharing-heals). A Gone's Cause is one of these errors,
// unwrapped or wrapped with %w.

// ErrGone, wrapped in what Config.Alive returns, says that the server is
// gone for certain (its owner has begun to exit): it is not probed for
// the busy grace. Its words begin the error that wraps it.
var ErrGone = errors.New("gone")

// FullServer is why a server refused to open a session: it has as many as
// it takes (503 with Retry-After).
type FullServer struct {
	URL string
	// Sessions is how many sessions it has, 0 when it did not say.
	Sessions int
	// RetryAfter is how long it asked to be left alone, 0 when it did not
	// say.
	RetryAfter time.Duration
}

func (e *FullServer) Error() string {
	switch {
	case e.Sessions == 1:
		return fmt.Sprintf("the shared server at %s is full (1 session)", e.URL)
	case e.Sessions > 1:
		return fmt.Sprintf("the shared server at %s is full (%d sessions)", e.URL, e.Sessions)
	}
	return fmt.Sprintf("the shared server at %s is full", e.URL)
}

// SilentServer is why the bridge gave up on a server that answered no
// probe, or no proof of a new connection, for After (stopped or frozen),
// or whose probe said it is gone for certain (ErrGone).
type SilentServer struct {
	URL   string
	After time.Duration
	last  error
	proof bool // what it did not answer was the proof a new connection asks
}

func (e *SilentServer) Error() string {
	if errors.Is(e.last, ErrGone) {
		return fmt.Sprintf("the shared server at %s is %v", e.URL, e.last)
	}
	asked := "probe"
	if e.proof {
		asked = "proof of a new connection"
	}
	return fmt.Sprintf("the shared server at %s has answered no %s for %s (stopped or frozen): %v", e.URL, asked, e.After.Round(time.Millisecond), e.last)
}

// silence is why a message that never reached the server failed: the
// watch's cause when it cut the message off; a silent server too when the
// server accepted the connection but answered nothing, not even the proof
// it was asked for (SIGSTOP: the kernel still accepts), for as long as
// since began; err otherwise.
func (b *Bridge) silence(ctx context.Context, err error, began time.Time) error {
	if silent := silenced(ctx); silent != nil {
		return silent
	}
	if neverConnected(err) && errors.Is(err, os.ErrDeadlineExceeded) {
		return &SilentServer{URL: b.cfg.URL, After: time.Since(began), last: err, proof: true}
	}
	return err
}

// unavailable is what a 503 says: the server is full (it says so, or asks
// to be tried again later), or shutting down.
func (b *Bridge) unavailable(resp *http.Response) error {
	var e wire.HTTPError
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(body, &e)
	retry := resp.Header.Get("Retry-After")
	if e.Error.Code != wire.ErrCodeFull && retry == "" {
		return errors.New("it is shutting down")
	}
	return &FullServer{URL: b.cfg.URL, Sessions: e.Error.Sessions, RetryAfter: retryAfter(retry, time.Now())}
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date; 0 when
// it says nothing usable.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if s, err := strconv.ParseUint(v, 10, 31); err == nil {
		return time.Duration(s) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(at.Sub(now), 0)
	}
	return 0
}

// unreachable is why a message could not be delivered: a full or silent
// server as such, anything else as unreachable.
func (b *Bridge) unreachable(err error) error {
	if errors.As(err, new(*FullServer)) || errors.As(err, new(*SilentServer)) {
		return err
	}
	return fmt.Errorf("the shared server at %s is unreachable: %v", b.cfg.URL, err)
}
