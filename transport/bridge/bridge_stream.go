package bridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Bounds of the wait before the GET stream is opened again.
const (
	streamRetryMin = 100 * time.Millisecond
	streamRetryMax = 2 * time.Second
)

// heartbeat pings the session within every Heartbeat so that the server's
// idle timeout never ends a session whose client is alive. A session the
// server forgot is re-opened; a silent server is left (watchServer), as a
// message would leave it; other errors are only logged at debug.
//
// It pings a probe timeout before each heartbeat is out (never more often
// than twice a heartbeat): a server frozen just after a ping is then
// replaced within a heartbeat and a busy grace, its take-over included
// (docs/design.md#a-stopped-server-is-gone), not a take-over later.
//
// A 2026-07-28 client has no session to ping: while its presence is held,
// each beat asks whether the lease still names the server, and the server
// is probed once the presence has heard nothing of it for a heartbeat (a
// server writes a comment on a listen silent for less,
// httpserver.DefaultListenKeepAlive): at that moment, not at the next
// beat. Its probes are a ping's: a server that answers none for the grace
// less a probe timeout is left, whatever it was silent for before (a
// heartbeat may be set below a server's keep-alive, and an older server
// writes none). So an idle client moves, or its frozen server is left,
// within a heartbeat and a busy grace, as a legacy one's is.
func (b *Bridge) heartbeat() {
	tick := time.NewTicker(max(b.cfg.Heartbeat-b.cfg.ProbeTimeout, b.cfg.Heartbeat/2, time.Millisecond)) // a heartbeat of 1ns is positive too
	defer tick.Stop()
	defer b.quiet.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
		case <-b.silent:
		}
		b.mu.Lock()
		sid, proto, present := b.session, b.record.Protocol, b.present
		b.mu.Unlock()
		if sid == "" && !present || !b.attachedNow() {
			continue
		}
		if sid == "" {
			if b.movesOnLost() {
				return
			}
			silence := time.Since(b.born) - time.Duration(b.heard.Load())
			if silence < b.cfg.Heartbeat {
				continue // its presence heard the server lately (its keep-alive, at least)
			}
			if silent := b.idleSilence(); silent != nil {
				b.leaveGone(silent)
				return
			}
			continue
		}
		res := b.exchange(context.WithValue(b.ctx, idleKey{}, true), wire.RequestFrame(heartbeatID, "ping", nil), sid, proto, true)
		if b.movesOnLost() {
			return
		}
		switch res.outcome {
		case gone:
			if fail := b.reinit(b.ctx, sid); fail != nil {
				b.log.Debug("heartbeat: "+fail.cause.Error(), zap.String("url", b.cfg.URL))
			}
		case failed, rejected:
			if errors.As(res.err, new(*SilentServer)) {
				// stopped or frozen: elect now, not at the client's next message
				b.leaveGone(res.err)
				return
			}
			b.log.Debug("heartbeat failed", zap.String("url", b.cfg.URL), zap.Int("status", res.status), zap.Error(res.err))
		}
	}
}

// streamLoop keeps the session's GET stream open once the client is
// initialized, and relays what arrives on it (notifications, requests such
// as roots/list, pings) to the client. A dropped stream is opened again; a
// session the server forgot is re-opened first.
func (b *Bridge) streamLoop() {
	for retry := streamRetryMin; ; {
		b.mu.Lock()
		sid, proto, ready := b.session, b.record.Protocol, b.ready
		b.mu.Unlock()
		if sid == "" || !ready {
			select {
			case <-b.wake:
				continue
			case <-b.ctx.Done():
				return
			}
		}
		opened, status := b.stream(sid, proto)
		if b.ctx.Err() != nil || !b.attachedNow() {
			return
		}
		// dropped, or no connection at all; or ended by a server that lost its lease
		if (status < 400 && b.leftGone()) || b.movesOnLost() {
			return
		}
		if status == http.StatusNotFound {
			if fail := b.reinit(b.ctx, sid); fail != nil {
				b.log.Debug("stream: "+fail.cause.Error(), zap.String("url", b.cfg.URL))
			}
		}
		if !b.pause(&retry, opened, b.wake) {
			return
		}
	}
}

// pause waits retry before a stream is opened again, or until wake (nil:
// never), and reports false once the bridge stops. The wait starts again
// from streamRetryMin after a stream that opened, and doubles up to
// streamRetryMax after one that did not.
func (b *Bridge) pause(retry *time.Duration, opened bool, wake <-chan struct{}) bool {
	if opened {
		*retry = streamRetryMin
	}
	timer := time.NewTimer(*retry)
	defer timer.Stop()
	select {
	case <-wake:
	case <-timer.C:
	case <-b.ctx.Done():
		return false
	}
	if !opened {
		*retry = min(2**retry, streamRetryMax)
	}
	return true
}

// leftGone leaves the server when it is gone, and reports whether it did:
// asked when its stream ended or could not be opened, so that an idle
// client learns at once that its server is gone
// (docs/design.md#nothing-is-lost: everyone learns at once), not at its
// next message. Gone is a probe that fails outright — refused, answered
// without the proof; one that times out may be a stopped server, whose
// client's next message waits out the busy grace instead.
func (b *Bridge) leftGone() bool {
	if b.cfg.Alive == nil {
		return false
	}
	err := b.cfg.Alive(b.ctx)
	var netErr net.Error
	if err == nil || b.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout() {
		return false
	}
	b.leaveGone(fmt.Errorf("the shared server at %s is gone: its stream ended and it does not answer (%v)", b.cfg.URL, err))
	return true
}

// leaveGone leaves a server that is gone while the client is idle, at
// once, as a failed message would: Done tells whoever watches it.
func (b *Bridge) leaveGone(cause error) {
	b.log.Info("the shared server is gone; electing now, before the client's next message", zap.String("url", b.cfg.URL), zap.String("reason", cause.Error()))
	b.leave(cause)
}

// stream holds one GET stream open until it drops or its session is
// replaced. It reports whether it opened, and the status when it did not.
func (b *Bridge) stream(sid, proto string) (opened bool, status int) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	b.mu.Lock()
	if b.session != sid {
		b.mu.Unlock()
		return false, 0
	}
	b.streamStop = cancel
	b.mu.Unlock()

	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint, nil) // New checked the endpoint
	req.Header.Set("Accept", "text/event-stream")
	b.setHeaders(req.Header, sid, proto)
	return b.listen(req, "stream", func(data []byte) error {
		b.toClient(data)
		return nil
	}, zap.String("session", sid))
}

// toClient writes data, what the server sent on its own (a notification,
// a request), to the client. A client that does not read holds the write,
// not the bridge: once the bridge stops (it left, or Close), the write is
// left to end by itself, as a local session's is (stdio.Local.Close), so
// that a host that stopped reading its stdout never holds the process's
// end, nor the election that follows a failover. Each write waits for the
// one before, so that the client hears what the server sent in order, also
// once one was left to end by itself.
func (b *Bridge) toClient(data []byte) {
	data = bytes.Clone(data) // the reader's buffer is its own again once this returns
	written := make(chan struct{})
	b.mu.Lock()
	before := b.written
	b.written = written
	b.mu.Unlock()
	go func() {
		defer close(written)
		if before != nil {
			<-before
		}
		_ = b.cfg.Out.Write(data) // a client gone is the stdio loop's business
	}()
	select {
	case <-written:
	case <-b.ctx.Done():
	}
}

// listen holds the event stream req opens (what: the stream, or the
// presence) until it ends, giving each its events' data; its log line on
// opening carries fields. It reports whether it opened, and the status
// when it did not.
func (b *Bridge) listen(req *http.Request, what string, each func([]byte) error, fields ...zap.Field) (bool, int) {
	url := zap.String("url", b.cfg.URL)
	resp, err := b.client.Do(req) // a connection of its own, never reused
	if err != nil {
		b.log.Debug(what+": cannot open", url, zap.Error(err))
		return false, 0
	}
	defer resp.Body.Close()
	if b.noteLease(resp.Header); b.leaseLost.Load() && b.movesOnLost() {
		// opened on a server that lost its lease, after it ended the
		// streams it had: an idle bridge moves now. One with a call in
		// flight holds it (movesOnLost).
		return true, http.StatusOK
	}
	if resp.StatusCode != http.StatusOK || !wire.IsEventStream(resp.Header) {
		b.log.Debug(what+": refused", url, zap.Int("status", resp.StatusCode))
		return false, resp.StatusCode
	}
	b.log.Debug(what+" open", append([]zap.Field{url}, fields...)...)
	body := io.Reader(resp.Body)
	if what == presenceStream {
		// opened: heard, and a server silent from now on is probed a
		// heartbeat later, keep-alive or not
		b.heardNow()
		b.quiet.Reset(b.cfg.Heartbeat)
		body = heardReader{body, b}
	}
	err = wire.ReadEvents(body, each)
	if req.Context().Err() == nil {
		b.log.Debug(what+" dropped", url, zap.Error(err))
	}
	return true, http.StatusOK
}

// heardReader notes when the server last sent anything on a presence,
// and puts off the probe of a silent server (Bridge.quiet).
type heardReader struct {
	io.Reader
	b *Bridge
}

func (h heardReader) Read(p []byte) (int, error) {
	n, err := h.Reader.Read(p)
	if n > 0 {
		h.b.heardNow()
		h.b.quiet.Reset(h.b.cfg.Heartbeat)
	}
	return n, err
}

// heardNow notes that the server was heard from, now.
func (b *Bridge) heardNow() { b.heard.Store(int64(time.Since(b.born))) }
