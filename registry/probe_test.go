package registry

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const (
	probeRepo     = "fedcba9876543210fedcba9876543210"
	probeInstance = "0123456789abcdef0123456789abcdef"
)

// identityServer answers GET / with body and status.
func identityServer(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func identityJSON(t *testing.T, edit func(map[string]any)) string {
	t.Helper()
	m := map[string]any{
		"name": "majordomus", "version": "1.2.0", "checkout": "work", "repository_id": probeRepo,
		"profile": "default", "instance": probeInstance, "leaseholder": true,
	}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHTTPProbe(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		ok     bool
		reason string
	}{
		{"this checkout, this instance, leaseholder", 200, identityJSON(t, nil), true, ""},
		{"not JSON", 200, "<html>hello</html>", false, "not a JSON identity"},
		{"a server error", 500, identityJSON(t, nil), false, "status 500"},
		{"another instance", 200, identityJSON(t, func(m map[string]any) { m["instance"] = "ffff" }), false, "another server"},
		{"another checkout", 200, identityJSON(t, func(m map[string]any) { m["repository_id"] = "0000" }), false, "another checkout"},
		{"not the leaseholder", 200, identityJSON(t, func(m map[string]any) { m["leaseholder"] = false }), false, "not the leaseholder"},
		{"no leaseholder key", 200, identityJSON(t, func(m map[string]any) { delete(m, "leaseholder") }), false, "not the leaseholder"},
		{"another program", 200, identityJSON(t, func(m map[string]any) { m["name"] = "gopls" }), false, "not a majordomus server"},
	}
	probe := HTTPProbe(5 * time.Second)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := identityServer(t, tt.status, tt.body)
			got := probe(context.Background(), ProbeTarget{URL: url, RepositoryID: probeRepo, Instance: probeInstance})
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
		got := probe(context.Background(), ProbeTarget{URL: target, RepositoryID: probeRepo, Instance: probeInstance})
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
		done <- HTTPProbe(timeout)(context.Background(), ProbeTarget{URL: srv.URL, RepositoryID: probeRepo, Instance: probeInstance})
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
