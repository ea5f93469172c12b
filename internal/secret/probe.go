package secret

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// maxAnswer bounds the identity a probe reads.
const maxAnswer = 64 << 10

// Probe asks the server at base (an http:// URL) to prove, within timeout,
// that it holds key, on a connection of its own, with no proxy and no
// redirect (see [prove]). It returns the server's answer and the
// connection, open, with nothing of it unread and no deadline: whatever is
// sent on it next goes to the server that proved itself (a bridge's
// POSTs), or the caller closes it. Its errors are reasons, for a log line.
func Probe(ctx context.Context, base, key string, timeout time.Duration) (json.RawMessage, net.Conn, error) {
	return probe(ctx, base, key, timeout, false)
}

// ProbeSealed is [Probe], asking the server to seal its whole identity
// into its answer for this prover ([SealAsk]): what an election reads a
// live server by, and what proves to the server that the connection is
// its owner's (a bridge's new connection). Sealing costs the server some
// 20 µs, so nothing else asks.
func ProbeSealed(ctx context.Context, base, key string, timeout time.Duration) (json.RawMessage, net.Conn, error) {
	return probe(ctx, base, key, timeout, true)
}

// probe is Probe, asking for the seal when sealed.
func probe(ctx context.Context, base, key string, timeout time.Duration, sealed bool) (json.RawMessage, net.Conn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, nil, fmt.Errorf("%q is not an http URL", base)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, connError(ctx, timeout, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	// A server's answer, head and body, is read up to twice maxAnswer, so
	// that what took a dead server's port cannot fill this process's memory
	// with an endless head.
	br := bufio.NewReader(io.LimitReader(conn, 2*maxAnswer))
	id, err := prove(conn, br, u.Host, key, sealed)
	if err == nil && br.Buffered() > 0 {
		err = errors.New("it said more than its proof")
	}
	if !stop() && err == nil { // the deadline broke the connection
		err = ctx.Err()
	}
	if err != nil {
		conn.Close()
		return nil, nil, connError(ctx, timeout, err)
	}
	return id, conn, nil
}

// prove asks the server at the other end of conn (host, as a Host header
// names it) to prove that it holds key: one GET /?challenge=…, carrying
// nothing of the key, and asking for the seal when sealed. It returns the
// server's answer (what GET / tells anyone: its name, its leaseholder claim
// and the proof, or the whole identity the server sealed into it for the
// holder of the key) only when the proof matches the claim; whatever a
// server that cannot prove it says is never believed, and it is never sent
// the token. The connection stays open for what follows, and nothing of it
// is left unread in br when the server sent no more than its answer. The
// caller bounds the exchange (conn's deadline).
func prove(conn net.Conn, br *bufio.Reader, host, key string, sealed bool) (json.RawMessage, error) {
	if key == "" {
		return nil, errors.New("the lease carries no secret, so no server can prove it is the lease's")
	}
	challenge := NewChallenge()
	target := "http://" + host + "/?challenge=" + challenge
	if sealed {
		target += "&seal=" + SealAsk(key, challenge)
	}
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if err := req.Write(conn); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	var claim struct {
		Leaseholder *bool  `json:"leaseholder"`
		Proof       string `json:"proof"`
		Sealed      string `json:"sealed"`
	}
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &claim) != nil {
		return nil, errors.New("the answer is not a JSON identity")
	}
	switch {
	case claim.Leaseholder == nil || claim.Proof == "":
		return nil, errors.New("it proves nothing: it says no leaseholder claim or no proof")
	case !Proves(claim.Proof, key, challenge, *claim.Leaseholder):
		return nil, errors.New("its proof does not match the lease's secret: it is not the lease's server")
	}
	if whole := opened(key, challenge, claim.Sealed, *claim.Leaseholder); whole != nil {
		return whole, nil
	}
	return body, nil
}

// opened is the whole identity a server sealed into its answer, when it
// opens and makes the claim it proved; nil otherwise.
func opened(key, challenge, sealed string, leaseholder bool) json.RawMessage {
	if sealed == "" {
		return nil
	}
	whole, err := Open(key, challenge, sealed)
	var claim struct {
		Leaseholder *bool `json:"leaseholder"`
	}
	if err != nil || json.Unmarshal(whole, &claim) != nil || claim.Leaseholder == nil || *claim.Leaseholder != leaseholder {
		return nil
	}
	return whole
}

// ErrNoAnswer is a probe's error when the server said nothing within the
// timeout (a frozen one), rather than refused or answered wrong.
var ErrNoAnswer = errors.New("no answer")

// connError turns a connection's error into a reason: a timeout says so
// (ErrNoAnswer), and wraps the error it was (a read's deadline, say).
func connError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w within %s: %w", ErrNoAnswer, timeout, err)
	}
	return err
}
