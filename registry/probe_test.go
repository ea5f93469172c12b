package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
)

const (
	probeRepo     = "fedcba9876543210fedcba9876543210"
	probeInstance = "0123456789abcdef0123456789abcdef"
)

var probeSecret = secret.New()

// identityServer answers GET / with status and the body body makes of the
// request's challenge.
func identityServer(t *testing.T, status int, body func(challenge string) string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body(r.URL.Query().Get("challenge"))))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// identityJSON is the identity a server holding probeSecret answers, proved
// for the leaseholder claim it makes; edit changes it afterwards.
func identityJSON(t *testing.T, edit func(m map[string]any, challenge string)) func(string) string {
	t.Helper()
	return func(challenge string) string {
		m := map[string]any{
			"name": "majordomus", "version": "1.2.0", "checkout": "work", "repository_id": probeRepo,
			"profile": "default", "instance": probeInstance, "leaseholder": true,
			"proof": secret.Proof(probeSecret, challenge, true),
		}
		if edit != nil {
			edit(m, challenge)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Error(err)
		}
		return string(b)
	}
}

func text(body string) func(string) string { return func(string) string { return body } }

func TestHTTPProbe(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   func(challenge string) string
		ok     bool
		reason string
	}{
		{"this checkout, this instance, leaseholder", 200, identityJSON(t, nil), true, ""},
		{"not JSON", 200, text("<html>hello</html>"), false, "not a JSON identity"},
		{"a server error", 500, identityJSON(t, nil), false, "status 500"},
		{"not the leaseholder", 200, identityJSON(t, func(m map[string]any, c string) {
			m["leaseholder"] = false
			m["proof"] = secret.Proof(probeSecret, c, false)
		}), false, "not the leaseholder"},
		{"a leaseholder claim proved false", 200, identityJSON(t, func(m map[string]any, c string) {
			m["proof"] = secret.Proof(probeSecret, c, false)
		}), false, "does not match"},
		{"no leaseholder key", 200, identityJSON(t, func(m map[string]any, _ string) { delete(m, "leaseholder") }), false, "proves nothing"},
		{"no proof", 200, identityJSON(t, func(m map[string]any, _ string) { delete(m, "proof") }), false, "proves nothing"},
		{"another secret", 200, identityJSON(t, func(m map[string]any, c string) {
			m["proof"] = secret.Proof(secret.New(), c, true)
		}), false, "does not match"},
		{"an old challenge's proof", 200, identityJSON(t, func(m map[string]any, _ string) {
			m["proof"] = secret.Proof(probeSecret, secret.NewChallenge(), true)
		}), false, "does not match"},
		{"the token for a proof", 200, identityJSON(t, func(m map[string]any, _ string) {
			m["proof"] = secret.Token(probeSecret)
		}), false, "does not match"},
		{"another program", 200, identityJSON(t, func(m map[string]any, _ string) { m["name"] = "gopls" }), false, "not a majordomus server"},
	}
	probe := HTTPProbe(5 * time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := identityServer(t, tt.status, tt.body)
			got := probe(context.Background(), ProbeTarget{URL: url, Secret: probeSecret})
			if (got.Status == ProbeOK) != tt.ok {
				t.Fatalf("probe = %+v, want ok=%t", got, tt.ok)
			}
			if !tt.ok && (got.Status != ProbeFailed || !strings.Contains(got.Reason, tt.reason)) {
				t.Errorf("probe = %+v, want a failure with %q", got, tt.reason)
			}
		})
	}
}

func TestHTTPProbe_NothingThere(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	probe := HTTPProbe(0)
	for _, target := range []string{url, "ftp://127.0.0.1:1", "::not a url", ""} {
		got := probe(context.Background(), ProbeTarget{URL: target, Secret: probeSecret})
		if got.Status != ProbeFailed || got.Reason == "" {
			t.Errorf("probe(%q) = %+v, want a failure with a reason", target, got)
		}
	}
}

func TestHTTPProbe_AHangingServerIsBoundedByTheTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	const timeout = 200 * time.Millisecond
	done := make(chan ProbeResult, 1)
	go func() {
		done <- HTTPProbe(timeout)(context.Background(), ProbeTarget{URL: srv.URL, Secret: probeSecret})
	}()
	select {
	case got := <-done:
		if got.Status != ProbeFailed || !strings.Contains(got.Reason, "no answer within 200ms") {
			t.Errorf("probe = %+v, want a timeout", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the probe was not bounded by its timeout")
	}
}

// A lease without a secret names no server that can prove anything, and
// the probe sends a server nothing of the secret: neither it nor its token.
func TestHTTPProbe_TheSecretStaysHome(t *testing.T) {
	var sent []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = append(sent, r.URL.RawQuery+" "+r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(identityJSON(t, nil)(r.URL.Query().Get("challenge"))))
	}))
	t.Cleanup(srv.Close)
	probe := HTTPProbe(5 * time.Second)
	got := probe(context.Background(), ProbeTarget{URL: srv.URL})
	if got.Status != ProbeFailed || !strings.Contains(got.Reason, "no secret") {
		t.Fatalf("a lease without a secret: probe = %+v", got)
	}
	if got := probe(context.Background(), ProbeTarget{URL: srv.URL, Secret: probeSecret}); got.Status != ProbeOK {
		t.Fatalf("probe = %+v", got)
	}
	if len(sent) != 1 || strings.Contains(sent[0], probeSecret) || strings.Contains(sent[0], secret.Token(probeSecret)) || !strings.HasSuffix(sent[0], " ") {
		t.Fatalf("the server was sent %q", sent)
	}
}
