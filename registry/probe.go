package registry

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

// ServerName is the "name" every majordomus server answers GET / with.
const ServerName = "majordomus"

// identity is the part of a server's GET / answer the probe checks.
type identity struct {
	Name        string `json:"name"`
	Leaseholder *bool  `json:"leaseholder"`
}

// HTTPProbe returns the real probe: one [FetchIdentity] bounded by timeout
// (zero means DefaultProbeTimeout), asking for the identity the server
// seals for the holder of the secret (what an attaching client is greeted
// with, [secret.ProbeSealed]). It is ProbeOK only when the server
// proved it holds the lease's secret and claims, within that proof, to be
// the leaseholder, and then holds the connection it proved itself on;
// anything else is ProbeFailed with the reason. The secret is the lease's
// own (fresh with every lease), so the proof names this checkout's lease
// and instance too. A process that took a dead server's port can prove
// nothing, so it is never attached to (docs/security.md).
func HTTPProbe(timeout time.Duration) ProbeFunc {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	return func(ctx context.Context, t ProbeTarget) ProbeResult {
		raw, id, conn, err := proveIdentity(ctx, t.URL, t.Secret, timeout, true)
		if err != nil {
			return ProbeResult{Status: ProbeFailed, Reason: err.Error(), Silent: errors.Is(err, secret.ErrNoAnswer)}
		}
		if !*id.Leaseholder {
			conn.Close()
			return ProbeResult{Status: ProbeFailed, Reason: "it says it is not the leaseholder"}
		}
		return ProbeResult{Status: ProbeOK, Conn: conn, Identity: raw}
	}
}

// FetchIdentity asks the server at base, within timeout, what GET / tells
// anyone (its name and its leaseholder claim), and returns it only when
// the server proved it holds the lease's secret ([secret.Probe]) and names
// itself ServerName: the one client of that answer, for the election's
// probe, the bridge's and status. Nothing of the secret is sent. Its
// errors are the probe's reasons.
func FetchIdentity(ctx context.Context, base, key string, timeout time.Duration) (json.RawMessage, error) {
	body, _, conn, err := proveIdentity(ctx, base, key, timeout, false)
	if err == nil {
		conn.Close()
	}
	return body, err
}

// proveIdentity is FetchIdentity, with what the probe checks of the answer
// and the connection the server proved itself on, open; sealed asks for
// the whole identity ([secret.ProbeSealed]).
func proveIdentity(ctx context.Context, base, key string, timeout time.Duration, sealed bool) (json.RawMessage, identity, net.Conn, error) {
	probe := secret.Probe
	if sealed {
		probe = secret.ProbeSealed
	}
	body, conn, err := probe(ctx, base, key, timeout)
	if err != nil {
		return nil, identity{}, nil, err
	}
	var id identity
	_ = json.Unmarshal(body, &id) // the probe decoded it already
	if id.Name != ServerName {
		conn.Close()
		return nil, identity{}, nil, fmt.Errorf("it is not a %s server (name %q)", ServerName, id.Name)
	}
	return body, id, conn, nil
}

// maxReport bounds the whole identity FetchReport reads.
const maxReport = 4 << 20

// FetchReport is the whole identity of the server at base, its board
// included, which a probe's answer leaves out (a board outgrows what a
// probe reads): what status shows. The server first proves it holds the
// lease's secret ([FetchIdentity]); only then is it asked, with the token
// ([AskProven]).
func FetchReport(ctx context.Context, base, key string, timeout time.Duration) (json.RawMessage, error) {
	status, body, err := AskProven(ctx, base, key, timeout, http.MethodGet, "/", maxReport)
	if err != nil || status != http.StatusOK || !json.Valid(body) {
		return nil, fmt.Errorf("the server's report: status %d (%v)", status, err)
	}
	return body, nil
}

// AskProven has the server at base prove, within timeout, that it holds
// key ([FetchIdentity]), and then sends it method path with the token, on
// the very connection it proved itself on: a process that took the port
// of a server that stopped meanwhile is never sent the token, and nothing
// it says is taken for the server's answer. It returns the answer's status
// and its body, read up to limit bytes; ErrNotProven when no proof came.
func AskProven(ctx context.Context, base, key string, timeout time.Duration, method, path string, limit int64) (int, []byte, error) {
	_, _, conn, err := proveIdentity(ctx, base, key, timeout, false)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %w", ErrNotProven, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(base, "/")+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Close = true // one request: the connection ends with its answer
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", secret.Authorization(key))
	if err := req.Write(conn); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit))
	return resp.StatusCode, body, err
}
