package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// failure is why the server cannot serve a message; notRun says the
// message provably did not run there.
type failure struct {
	cause  error
	notRun bool
	moved  bool // refused unrun by a server that lost its lease (409 lease_lost)
}

// What one POST came to.
type outcome int

const (
	answered outcome = iota // 200 or 202: body holds the answer, if any
	gone                    // 404: the server does not know the session
	rejected                // another 4xx: the server refused the message
	failed                  // unreachable, 5xx, or the answer broke off
)

type exchangeResult struct {
	outcome outcome
	body    []byte // the answer (200), or the error body (4xx)
	session string // Mcp-Session-Id of the response
	status  int
	err     error
	notRun  bool
}

// relay sends msg on the current session, re-initialising once if the
// server forgot it, and returns the answer or why there is none.
func (b *Bridge) relay(ctx context.Context, msg json.RawMessage, calls []call) ([]byte, *failure) {
	modern := len(calls) == 1 && mcp.IsModernProtocol(calls[0].version)
	open := modern
	if !modern {
		sid, _, fail := b.current(ctx)
		if fail != nil {
			return nil, fail
		}
		open = sid != ""
	}
	if answer, ok := b.answeredHere(msg, open); ok {
		return answer, nil
	}
	if !open && !slices.ContainsFunc(calls, func(c call) bool { return c.env.IsRequest() }) {
		return nil, nil // notifications of no session (a cancel of a call answered): refused there
	}
	if modern {
		return b.relayModern(ctx, msg, calls[0])
	}
	initialize := len(calls) == 1 && calls[0].env.Method == string(mcp.MethodInitialize)
	refused := false
	if initialize {
		if b.seeThrough(ctx) {
			return b.seenThrough(ctx, msg, calls)
		}
		var done func(refused bool)
		ctx, done = b.reopening(ctx)
		defer func() { done(refused) }()
	}
	for attempt := 0; ; attempt++ {
		sid, proto := "", "" // an initialize: a new session
		if !initialize {
			var fail *failure
			if sid, proto, fail = b.current(ctx); fail != nil {
				return nil, fail
			}
		}
		res := b.exchange(ctx, msg, sid, proto, b.resendable(calls))
		switch res.outcome {
		case answered:
			if initialize {
				if wire.LeaseLostAnswer(res.body, wire.CodeLeaseLost) {
					return nil, &failure{cause: fmt.Errorf("the shared server at %s refused a new session: %v", b.cfg.URL, wire.AnswerError(res.body)), notRun: true}
				}
				refused = wire.AnswerError(res.body) != nil // by the server itself, as mcp-go refuses
				if !b.initialized(ctx, calls[0], res) {
					return nil, &failure{cause: errors.New("the bridge stopped relaying while the client's session was opened"), notRun: true}
				}
				if !carry.Carrying(ctx) { // the client's own: the bridge's mark is not its to read
					res.body = carry.Unmarked(res.body)
				}
			}
			if b.observe(calls, res.body) && b.resendable(calls) {
				// the session left carried it without: what serves next is asked
				return nil, &failure{cause: errors.New("the bridge left its server while the client asked it what to hear")}
			}
			return res.body, nil
		case gone:
			if attempt > 0 {
				return nil, &failure{cause: fmt.Errorf("the shared server at %s lost the session twice in a row", b.cfg.URL), notRun: true}
			}
			if fail := b.reinit(ctx, sid); fail != nil {
				return nil, fail
			}
		case rejected:
			return b.rejectedAnswer(msg, res), nil
		default:
			if res.status == http.StatusConflict {
				return nil, &failure{cause: fmt.Errorf("the shared server at %s refused the message: %v", b.cfg.URL, res.err), notRun: true, moved: true}
			}
			return nil, &failure{cause: b.unreachable(res.err), notRun: res.notRun}
		}
	}
}

// exchange POSTs one message or batch and reads the answer. Whatever the
// server sends before it (notifications, requests) goes to the client.
// resendable says whether the message may be sent twice (see poster).
func (b *Bridge) exchange(ctx context.Context, msg json.RawMessage, sid, proto string, resendable bool) exchangeResult {
	header := postHeader()
	b.setHeaders(header, sid, proto)
	if sid == "" {
		carry.SetClaim(header, ctx) // an initialize, opening the session again
	}
	return b.post(ctx, msg, header, resendable)
}

// postHeader is what every POST of a bridge says of its body and of the
// answers it takes.
func postHeader() http.Header {
	return http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
}

// post POSTs msg with header and reads the answer (see exchange).
func (b *Bridge) post(ctx context.Context, msg json.RawMessage, header http.Header, resendable bool) exchangeResult {
	carry.SetCarrying(header, ctx)
	carry.SetCall(header, ctx)
	modern := mcp.IsModernProtocol(header.Get(mcp.HeaderProtocolVersion))
	began := time.Now()
	ctx, stopWatch := b.watchServer(ctx)
	defer stopWatch()
	resp, done, err := b.posts.post(ctx, msg, header, resendable)
	if err != nil {
		b.posts.closeIdle() // the server may be gone: its kept connections with it
		return exchangeResult{outcome: failed, err: b.silence(ctx, err, began), notRun: neverConnected(err)}
	}
	res := b.readAnswer(msg, resp, modern)
	if res.outcome == failed {
		b.posts.closeIdle()
		if silent := silenced(ctx); silent != nil {
			res.err = silent
		}
	}
	done(drained(resp.Body))
	return res
}

// readAnswer reads the answer to msg. For a modern message, a JSON body
// is its answer whatever the status (that revision answers an unknown
// method 404, bad params 400, each with a JSON-RPC error), but for 503:
// the server's own word that the message did not run (it is shutting down,
// or full), never an answer.
func (b *Bridge) readAnswer(msg json.RawMessage, resp *http.Response, modern bool) exchangeResult {
	b.noteLease(resp.Header)
	res := exchangeResult{status: resp.StatusCode, session: resp.Header.Get(server.HeaderKeySessionID)}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		res.outcome, res.notRun, res.err = failed, true, b.unavailable(resp)
	case modern && resp.StatusCode != http.StatusOK && wire.IsJSON(resp.Header):
		// Read whole, as a 200's is: a refusal may be longer than the
		// request it refuses (mcp-go writes '<' as \u003c), and a local
		// session writes it whole (R8).
		body, err := io.ReadAll(resp.Body)
		res.outcome, res.body = answered, bytes.TrimSpace(body)
		if err != nil || !wire.IsAnswer(res.body) {
			res.outcome, res.err = failed, fmt.Errorf("status %d: %s", resp.StatusCode, wire.HTTPErrorText(body))
		}
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		res.outcome = answered
	case resp.StatusCode == http.StatusOK && wire.IsEventStream(resp.Header):
		var answers [][]byte
		err := wire.ReadEvents(resp.Body, func(data []byte) error {
			if e, err := wire.ReadEnvelope(data); err != nil || e.Method == "" {
				answers = append(answers, bytes.Clone(data)) // a response, or a batch of them
				return nil
			}
			b.toClient(data)
			return nil
		})
		// An answer read in full is the outcome, even when the stream broke
		// after it (the server died before ending the response): what it
		// answered ran, and its client is told so, not "outcome unknown".
		if err != nil && (len(answers) == 0 || !answersEvery(msg, answers[len(answers)-1])) ||
			len(answers) == 0 && slices.ContainsFunc(readCalls(msg), func(c call) bool { return c.env.IsRequest() }) {
			return exchangeResult{outcome: failed, err: fmt.Errorf("the answer broke off: %v", orEOF(err))}
		}
		res.outcome = answered
		if len(answers) > 0 {
			res.body = answers[len(answers)-1]
		}
	case resp.StatusCode == http.StatusOK:
		body, err := io.ReadAll(resp.Body)
		body = bytes.TrimSpace(body)
		if err != nil || (len(body) > 0 && !json.Valid(body)) {
			return exchangeResult{outcome: failed, err: fmt.Errorf("the answer is not JSON: %v", orEOF(err))}
		}
		res.outcome, res.body = answered, body
	case resp.StatusCode == http.StatusNotFound:
		res.outcome = gone
	case resp.StatusCode >= 500:
		res.outcome, res.err = failed, fmt.Errorf("status %d", resp.StatusCode)
	default:
		res.outcome = rejected
		res.body, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if resp.StatusCode == http.StatusConflict && strings.Contains(string(res.body), wire.ErrCodeLeaseLost) {
			res.outcome, res.notRun, res.err = failed, true, errors.New(wire.HTTPErrorText(res.body)) // its code, lease_lost, first
		}
	}
	return res
}

// answersEvery reports whether answer holds an answer to every request of
// msg (one message or a batch), by id as mcp-go writes ids back.
func answersEvery(msg json.RawMessage, answer []byte) bool {
	ids := map[string]bool{}
	for _, m := range wire.Members(answer) {
		if e, err := wire.ReadEnvelope(m); err == nil && e.Method == "" && len(e.ID) > 0 {
			ids[wire.IDKey(e.ID)] = true
		}
	}
	for _, c := range readCalls(msg) {
		if c.env.IsRequest() && !ids[wire.IDKey(c.env.ID)] {
			return false
		}
	}
	return true
}

// observe learns from what the client sent and was answered: that it is
// initialized, which tools are safe to resend, what it announced. Only the
// answers it learns from are decoded. It reports whether it learned what
// the client asks to hear once the bridge had left: the session it left
// with, carried on, has none of it.
func (b *Bridge) observe(calls []call, answer []byte) (late bool) {
	var results map[string]json.RawMessage
	if slices.ContainsFunc(calls, func(c call) bool {
		return c.env.Method == string(mcp.MethodToolsList) || c.tool == carry.AnnounceTool || carry.TellsGeneration(c.env.Method, c.tool, c.params) || carry.HeardMethod(c.env.Method)
	}) {
		results = wire.ResultsByID(answer)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range calls {
		result := results[wire.IDKey(c.env.ID)]
		switch {
		case c.env.Method == "notifications/initialized":
			if !b.ready {
				b.goLocked(func() { _ = b.learnTools(b.ctx, nil) })
			}
			b.ready = true
			defer poke(b.wake)
		case c.env.Method == string(mcp.MethodToolsList) && result != nil:
			carry.SafeToResend(b.record.SafeTools, result)
		case c.tool == carry.AnnounceTool && result != nil && !wire.ToolFailed(result):
			b.record.Announce = bytes.Clone(c.args)
		case carry.TellsGeneration(c.env.Method, c.tool, c.params) && result != nil:
			b.record.Generation = max(b.record.Generation, carry.ToldGeneration(result))
		case carry.HeardMethod(c.env.Method) && result != nil:
			b.record.Heard.NoteHeard(c.env.Method, c.params)
			late = late || b.left != nil
		}
	}
	return late
}

// noteAnnouncing notes the majordomus_announce of calls, if any, as one
// whose outcome is unknown (sent, not answered), or as no longer one.
func (b *Bridge) noteAnnouncing(calls []call, unknown bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range calls {
		switch {
		case c.tool != carry.AnnounceTool:
		case unknown:
			b.announcing = bytes.Clone(c.args)
		case bytes.Equal(b.announcing, c.args):
			b.announcing = nil
		}
	}
}

// rejectedAnswer answers the requests of a message the server refused
// (400, 413…) with an error naming the refusal; no election follows.
func (b *Bridge) rejectedAnswer(msg json.RawMessage, res exchangeResult) []byte {
	b.log.Warn("the shared server rejected a message", zap.String("url", b.cfg.URL), zap.Int("status", res.status))
	text := "the shared server rejected the message: " + wire.HTTPErrorText(res.body)
	if res.status == http.StatusRequestEntityTooLarge {
		// A server with a smaller limit than maxMessageBytes, which the
		// stdio loop enforces before any message reaches a bridge.
		text = "payload too large: " + text
	}
	return wire.RefuseEach(msg, mcp.INVALID_REQUEST, text)
}

// setHeaders sets what every request of the bridge carries: its token,
// and the session's id and protocol version once it has them.
func (b *Bridge) setHeaders(h http.Header, sid, proto string) {
	h.Set("Authorization", b.authorization)
	if sid != "" {
		h.Set(server.HeaderKeySessionID, sid)
	}
	if proto != "" {
		h.Set(mcp.HeaderProtocolVersion, proto)
	}
}

// neverConnected reports whether a request failed before reaching the
// server (connection refused, no route): it provably did not run.
func neverConnected(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// drained reads what is left of a small answer's body and reports whether
// it reached its end: only then may its connection carry another.
func drained(body io.Reader) bool {
	const most = 64 << 10
	n, err := io.Copy(io.Discard, io.LimitReader(body, most))
	return err == nil && n < most
}

func orEOF(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}
