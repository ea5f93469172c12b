package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"go.uber.org/zap"
)

// switchOver hands the client's session to what serves next: the first
// caller calls Failover, later ones wait for it. It returns only ctx's
// cause; what the failover gave is then b.route()'s.
func (b *Bridge) switchOver(ctx context.Context, cause error) error {
	b.mu.Lock()
	switch b.state {
	case attached:
		b.state, b.switched = switching, make(chan struct{})
		carried := Carried{Initialize: b.initialize, Announce: b.announce, Protocol: b.protocol, SafeTools: maps.Clone(b.safe), Peer: b.peer, Meta: b.meta, heard: b.heard.clone()}
		sid, proto := b.session, b.protocol
		b.mu.Unlock()
		b.stopBackground()
		if sid != "" {
			b.leaveLater(sid, proto)
		}
		b.log.Debug("the shared server failed; the election decides what serves next", zap.String("url", b.cfg.URL), zap.String("reason", cause.Error()))
		var next Backend
		err := errors.New("no failover is configured")
		if b.cfg.Failover != nil {
			next, err = b.cfg.Failover(ctx, cause, carried)
		}
		if err == nil && next == nil {
			err = errors.New("the failover gave no backend")
		}
		b.mu.Lock()
		orphan := b.state == closed // Close ran meanwhile
		switch {
		case orphan:
		case err != nil:
			b.state, b.downErr = down, fmt.Errorf("%v; %v", cause, err)
		default:
			b.state, b.next = routed, next
		}
		close(b.switched)
		b.mu.Unlock()
		if orphan {
			closeBackend(next)
		}
	case switching:
		switched := b.switched
		b.mu.Unlock()
		select {
		case <-switched:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	default:
		b.mu.Unlock()
	}
	return nil
}

// failover elects again (once, whatever the number of messages that met
// the failure) and answers msg from what serves now.
func (b *Bridge) failover(ctx context.Context, msg json.RawMessage, calls []call, fail *failure) []byte {
	if err := b.switchOver(ctx, fail.cause); err != nil {
		return Unavailable(msg, err)
	}
	next, err := b.route()
	if err != nil {
		return Unavailable(msg, err)
	}
	if fail.notRun {
		return next.Handle(ctx, msg)
	}
	return b.resend(ctx, next, msg, calls, fail.cause)
}

// resend sends on what may be resent of a message whose outcome is
// unknown, and answers the rest with "outcome unknown".
func (b *Bridge) resend(ctx context.Context, next Backend, msg json.RawMessage, calls []call, cause error) []byte {
	var again []json.RawMessage
	var unknown [][]byte
	for _, c := range calls {
		switch {
		case c.env.Method == "": // an answer to the old server's request: it is gone
		case b.mayRepeat(c):
			again = append(again, c.raw)
		case c.env.IsRequest():
			unknown = append(unknown, ErrorFrame(c.env.ID, CodeInternalError, fmt.Sprintf(
				"outcome unknown: %s %s was sent to the shared server at %s, which went away before answering (%v); "+
					"it was not sent again because it may have taken effect", c.env.Method, c.tool, b.cfg.URL, cause)))
		}
	}
	if len(again) > 0 {
		b.log.Debug("resending what its annotations say may run twice", zap.String("url", b.cfg.URL), zap.Int("messages", len(again)), zap.Int("outcome_unknown", len(unknown)))
	}
	if _, batch := SplitBatch(msg); !batch {
		if len(again) == 1 {
			return next.Handle(ctx, again[0])
		}
		if len(unknown) == 1 {
			return unknown[0]
		}
		return nil
	}
	var answers []json.RawMessage
	if len(again) > 0 {
		sub, _ := json.Marshal(again)
		if a := next.Handle(ctx, sub); a != nil {
			if members, ok := SplitBatch(a); ok {
				answers = append(answers, members...)
			} else {
				answers = append(answers, a)
			}
		}
	}
	for _, u := range unknown {
		answers = append(answers, u)
	}
	if len(answers) == 0 {
		return nil
	}
	out, _ := json.Marshal(answers)
	return out
}
