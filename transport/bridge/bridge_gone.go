package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Gone is why a bridge no longer relays to its server, with the client's
// session as the bridge knew it.
type Gone struct {
	// URL is the server the bridge left.
	URL string
	// Session is the client's session, to be carried onto what serves next.
	Session carry.Session
	// Cause is why the bridge left: a *FullServer, a silent server
	// (*SilentServer), or words. Gone unwraps to it.
	Cause error
	// unsent says the message Relay returned it for never reached the
	// server: all of it may be sent again.
	unsent bool
}

func (g *Gone) Error() string { return g.Cause.Error() }
func (g *Gone) Unwrap() error { return g.Cause }

// forMessage is g as Relay returns it for one message: with what the
// bridge knows of the tools by now, which decides what is resent.
func (b *Bridge) forMessage(g *Gone, unsent bool) *Gone {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.forMessageLocked(g, unsent)
}

func (b *Bridge) forMessageLocked(g *Gone, unsent bool) *Gone {
	c := *g
	c.unsent, c.Session.SafeTools = unsent, maps.Clone(b.record.SafeTools)
	return &c
}

// errClosed is why a closed bridge relays nothing.
var errClosed = errors.New("the bridge is closed")

// Done is closed once the bridge no longer relays: it left its server
// (Err is then a *Gone) or it was closed.
func (b *Bridge) Done() <-chan struct{} { return b.done }

// Err is nil while the bridge relays; then a *Gone once it left its
// server, or an error saying it was closed.
func (b *Bridge) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.left != nil:
		return b.left
	case b.closed:
		return errClosed
	}
	return nil
}

// gone is what a message meets on a bridge that no longer relays: its
// *Gone, or one saying it is closed; nil while it relays.
func (b *Bridge) gone() *Gone {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.left != nil:
		return b.forMessageLocked(b.left, true)
	case b.closed:
		return &Gone{URL: b.cfg.URL, Session: b.carried(), Cause: errClosed, unsent: true}
	}
	return nil
}

// carried is the client's session as the bridge knows it (b.mu held),
// with its announcement in flight rather than the one answered before:
// the server left may have kept and shown it, and the board never goes
// back (docs/design.md#nothing-is-lost).
func (b *Bridge) carried() carry.Session {
	c := b.record
	if b.announcing != nil {
		c.Announce = b.announcing
	}
	c.SafeTools, c.Heard = maps.Clone(c.SafeTools), c.Heard.Clone()
	return c
}

// leave ends the bridge's relaying for cause, once (the first cause is
// the one reported): its background stops, and the session it had is
// ended on the server once that answers again (leaveLater).
func (b *Bridge) leave(cause error) *Gone {
	b.mu.Lock()
	if b.left != nil {
		g := b.left
		b.mu.Unlock()
		return g
	}
	g := &Gone{URL: b.cfg.URL, Session: b.carried(), Cause: cause}
	if b.closed { // Close ends the session, seeing it not left
		b.mu.Unlock()
		return g
	}
	sid, proto := b.session, b.record.Protocol
	g.Session.Left, g.Session.LeftURL, b.left = sid, b.cfg.URL, g
	b.mu.Unlock()
	b.cancel() // the background stops, unwaited for: it may be what left
	if sid != "" {
		b.leaveLater(sid, proto)
	}
	b.log.Debug("the bridge left its shared server; the election decides what serves next", zap.String("url", b.cfg.URL), zap.String("reason", cause.Error()))
	b.markDone()
	return g
}

// markDone closes Done, once.
func (b *Bridge) markDone() { b.doneOnce.Do(func() { close(b.done) }) }

// Resend answers msg, the message g was returned for, from next: all of
// it when it never reached the server; otherwise what may run twice is
// sent again and the rest is answered "outcome unknown". A
// notifications/cancelled is never sent again: it names a request of the
// server that left, which the client cancelled, so it was not sent again,
// and its id may name the client's next request by now.
func (g *Gone) Resend(ctx context.Context, next wire.Backend, msg json.RawMessage) []byte {
	if wire.IsMethod(msg, mcp.MethodNotificationCancelled) {
		return nil
	}
	if g.unsent {
		return next.Handle(ctx, msg)
	}
	var again []json.RawMessage
	var at []int // where each of again stands in msg
	var unknown [][]byte
	calls := readCalls(msg)
	for i, c := range calls {
		switch {
		case c.env.Method == "": // an answer to the old server's request: it is gone
		case c.env.Method == string(mcp.MethodNotificationCancelled): // as a lone one, above
		case mayRepeat(c, g.Session.SafeTools):
			again, at = append(again, c.raw), append(at, i)
		case c.env.IsRequest():
			unknown = append(unknown, wire.ErrorFrame(c.env.ID, mcp.INTERNAL_ERROR, fmt.Sprintf(
				"outcome unknown: %s %s was sent to the shared server at %s, which went away before answering (%v); "+
					"it was not sent again because it may have taken effect", c.env.Method, c.tool, g.URL, g.Cause)))
		}
	}
	if len(again) > 0 && len(again) == len(calls) {
		return next.Handle(ctx, msg) // all of it, as it was sent
	}
	// Each alone, named as the member it was (carry.Member): a batch
	// without the members left out would name its calls by other places,
	// and the server that kept them before it went would not know them.
	var answers [][]byte
	for j, m := range again {
		if a := next.Handle(carry.Member(ctx, at[j]), m); a != nil {
			answers = append(answers, a)
		}
	}
	return wire.Gather(msg, append(answers, unknown...))
}
