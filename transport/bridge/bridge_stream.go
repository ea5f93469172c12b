package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Bounds of the wait before the GET stream is opened again.
const (
	streamRetryMin = 100 * time.Millisecond
	streamRetryMax = 2 * time.Second
)

// heartbeat pings the session every Heartbeat so that the server's idle
// timeout never ends a session whose client is alive. A session the server
// forgot is re-opened; a silent server is left (watchServer), as a message
// would leave it; other errors are only logged at debug.
func (b *Bridge) heartbeat() {
	tick := time.NewTicker(b.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
		b.mu.Lock()
		sid, proto := b.session, b.record.Protocol
		b.mu.Unlock()
		if sid == "" || !b.attachedNow() {
			continue
		}
		res := b.exchange(context.WithValue(b.ctx, idleKey{}, true), wire.RequestFrame(heartbeatID, "ping", nil), sid, proto, true)
		if b.shouldMove() {
			b.move()
			return
		}
		switch res.outcome {
		case gone:
			if fail := b.reinit(b.ctx, sid); fail != nil {
				b.log.Debug("heartbeat: "+fail.cause.Error(), zap.String("url", b.cfg.URL))
			}
		case failed, rejected:
			if _, _, silent := SilentFor(res.err); silent {
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
	retry := streamRetryMin
	for {
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
		if status != http.StatusNotFound && status < 400 { // dropped, or no connection at all
			if cause := b.goneNow(); cause != nil {
				b.leaveGone(cause)
				return
			}
		}
		if status == http.StatusNotFound {
			if fail := b.reinit(b.ctx, sid); fail != nil {
				b.log.Debug("stream: "+fail.cause.Error(), zap.String("url", b.cfg.URL))
			}
		}
		if opened {
			retry = streamRetryMin
		}
		timer := time.NewTimer(retry)
		select {
		case <-b.wake:
		case <-timer.C:
		case <-b.ctx.Done():
			timer.Stop()
			return
		}
		timer.Stop()
		if !opened {
			retry = min(2*retry, streamRetryMax)
		}
	}
}

// goneNow says why the server is gone, or nil: asked when its stream ended
// or could not be opened, so that an idle client learns at once that its
// server is gone (docs/design.md#nothing-is-lost: everyone learns at once),
// not at its next message. Gone is a probe that fails outright — refused,
// answered without the proof; one that times out may be a stopped server,
// whose client's next message waits out the busy grace instead.
func (b *Bridge) goneNow() error {
	if b.cfg.Alive == nil {
		return nil
	}
	err := b.cfg.Alive(b.ctx)
	var netErr net.Error
	switch {
	case err == nil, b.ctx.Err() != nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return nil
	}
	return fmt.Errorf("the shared server at %s is gone: its stream ended and it does not answer (%v)", b.cfg.URL, err)
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

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint, nil)
	if err != nil {
		return false, 0
	}
	req.Header.Set("Accept", "text/event-stream")
	b.setHeaders(req.Header, sid, proto)
	resp, err := b.client.Do(req) // an ended stream's connection is never reused
	if err != nil {
		b.log.Debug("stream: cannot open", zap.String("url", b.cfg.URL), zap.Error(err))
		return false, 0
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !wire.IsEventStream(resp.Header) {
		b.log.Debug("stream: refused", zap.String("url", b.cfg.URL), zap.Int("status", resp.StatusCode))
		return false, resp.StatusCode
	}
	b.log.Debug("stream open", zap.String("url", b.cfg.URL), zap.String("session", sid))
	err = wire.ReadEvents(resp.Body, func(data []byte) error {
		_ = b.cfg.Out.Write(data) // a client gone is the stdio loop's business
		return nil
	})
	if ctx.Err() == nil {
		b.log.Debug("stream dropped", zap.String("url", b.cfg.URL), zap.Error(err))
	}
	return true, http.StatusOK
}

// errorMessage is the message of a JSON-RPC error answer.
func errorMessage(answer []byte) string {
	if err := wire.AnswerError(answer); err != nil {
		return err.Error()
	}
	return ""
}

// leaseLost reports whether an answer to initialize is the refusal of a
// server that lost its lease.
func leaseLost(answer []byte) bool {
	var a struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Reason string `json:"reason"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(answer, &a) != nil || a.Error == nil || a.Error.Code != wire.CodeLeaseLost {
		return false
	}
	return a.Error.Data.Reason == wire.ErrCodeLeaseLost || strings.Contains(a.Error.Message, wire.ErrCodeLeaseLost)
}

// protocolOf is the protocol version an initialize result negotiated.
func protocolOf(answer []byte) string {
	var a struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	_ = json.Unmarshal(answer, &a)
	return a.Result.ProtocolVersion
}

// httpErrorMessage is the "code: message" of a JSON error body, or the
// body itself when it is not one.
func httpErrorMessage(body []byte) string {
	var e wire.HTTPError
	if json.Unmarshal(body, &e) == nil && e.Error.Code != "" {
		return e.Error.Code + ": " + e.Error.Message
	}
	return strings.TrimSpace(string(body))
}
