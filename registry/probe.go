package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// ServerName is the "name" every majordomus server answers GET / with.
const ServerName = "majordomus"

// maxIdentitySize bounds the identity answer a probe reads.
const maxIdentitySize = 64 << 10

// identity is the part of a server's GET / answer the probe checks.
type identity struct {
	Name         string `json:"name"`
	RepositoryID string `json:"repository_id"`
	Instance     string `json:"instance"`
	Leaseholder  *bool  `json:"leaseholder"`
}

// HTTPProbe returns the real probe: one GET <url>/ bounded by timeout (zero
// means DefaultProbeTimeout). It is ProbeOK only for status 200 and a JSON
// object naming ServerName, the target's repository id and instance, and
// leaseholder: true; anything else is ProbeFailed with the reason. A nil
// client means a private one that uses no proxy, keeps no connection and
// follows no redirect.
func HTTPProbe(client *http.Client, timeout time.Duration) ProbeFunc {
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	if client == nil {
		client = &http.Client{
			Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	}
	return func(ctx context.Context, t ProbeTarget) ProbeResult {
		id, err := fetchIdentity(ctx, client, timeout, t.URL)
		if err != nil {
			return failed(err.Error())
		}
		switch {
		case id.Name != ServerName:
			return failed(fmt.Sprintf("it is not a %s server (name %q)", ServerName, id.Name))
		case t.RepositoryID == "" || id.RepositoryID != t.RepositoryID:
			return failed(fmt.Sprintf("it answers for another checkout (repository_id %q)", id.RepositoryID))
		case t.Instance == "" || id.Instance != t.Instance:
			return failed(fmt.Sprintf("it answers as another server (instance %q)", id.Instance))
		case id.Leaseholder == nil || !*id.Leaseholder:
			return failed("it says it is not the leaseholder")
		}
		return ProbeResult{Status: ProbeOK}
	}
}

func failed(reason string) ProbeResult {
	return ProbeResult{Status: ProbeFailed, Reason: reason}
}

// fetchIdentity GETs base's root and decodes the answer; its errors are the
// probe's reasons.
func fetchIdentity(ctx context.Context, client *http.Client, timeout time.Duration, base string) (identity, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return identity{}, fmt.Errorf("%q is not an http URL", base)
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "/", "", "", ""

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return identity{}, err
	}
	req.Close = true
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return identity{}, transportError(ctx, timeout, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return identity{}, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxIdentitySize))
	if err != nil {
		return identity{}, transportError(ctx, timeout, err)
	}
	var id identity
	if err := json.Unmarshal(body, &id); err != nil {
		return identity{}, fmt.Errorf("the answer is not a JSON identity (%v)", err)
	}
	return id, nil
}

// transportError turns a client error into a reason: a timeout says so, and
// the URL wrapper (which repeats the method and URL) is dropped.
func transportError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", timeout)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
