package secret

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// identity answers a probe's challenge as a server holding key does,
// claiming leaseholder.
func identity(key string, leaseholder bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		proof := Proof(key, r.URL.Query().Get("challenge"), leaseholder)
		fmt.Fprintf(w, `{"name":"majordomus","leaseholder":%t,"proof":%q}`, leaseholder, proof)
	}
}

func TestAProbeBelievesOnlyAProof(t *testing.T) {
	key := New()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		err     string // "" when believed
	}{
		{"the lease's server", identity(key, true), ""},
		{"a server that says it is not the leaseholder, and proves it", identity(key, false), ""},
		{"another lease's server", identity(New(), true), "does not match"},
		{"a proof for the other claim", func(w http.ResponseWriter, r *http.Request) {
			proof := Proof(key, r.URL.Query().Get("challenge"), false)
			fmt.Fprintf(w, `{"leaseholder":true,"proof":%q}`, proof)
		}, "does not match"},
		{"a claim without a proof", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"name":"majordomus","leaseholder":true}`)
		}, "proves nothing"},
		{"a proof without a claim", func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"proof":%q}`, Proof(key, r.URL.Query().Get("challenge"), true))
		}, "proves nothing"},
		{"a page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<html>majordomus</html>") }, "not a JSON identity"},
		{"an empty answer", func(http.ResponseWriter, *http.Request) {}, "not a JSON identity"},
		{"an error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusInternalServerError) }, "status 500"},
		{"a redirect, never followed", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/", http.StatusFound)
		}, "status 302"},
		{"an answer beyond the bound", func(w http.ResponseWriter, r *http.Request) {
			proof := Proof(key, r.URL.Query().Get("challenge"), true)
			fmt.Fprintf(w, `{"leaseholder":true,"proof":%q,"pad":"%s"}`, proof, strings.Repeat("x", maxAnswer))
		}, "not a JSON identity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			body, conn, err := Probe(context.Background(), srv.URL, key, 5*time.Second)
			if err == nil {
				conn.Close()
			}
			switch {
			case tc.err == "" && (err != nil || !json.Valid(body)):
				t.Fatalf("Probe = %s, %v; want the server's identity", body, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("Probe = %s, %v; want an error saying %q", body, err, tc.err)
			}
		})
	}
}

// The probe sends one GET / with a fresh valid challenge, to the host it
// was given, and nothing of the key: no token, no secret in the URL.
func TestAProbeSendsNothingOfTheKey(t *testing.T) {
	key := New()
	requests := make(chan *http.Request, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests <- r
		identity(key, true)(w, r)
	}))
	defer srv.Close()
	for range 2 {
		_, conn, err := Probe(context.Background(), srv.URL+"/ignored/path", key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
	}
	first, second := <-requests, <-requests
	for _, r := range []*http.Request{first, second} {
		c := r.URL.Query().Get("challenge")
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/" || r.Host != strings.TrimPrefix(srv.URL, "http://"):
			t.Errorf("the probe asked %s http://%s%s", r.Method, r.Host, r.URL.Path)
		case !ValidChallenge(c):
			t.Errorf("the challenge %q is not one a server proves", c)
		case r.Header.Get("Authorization") != "" || strings.Contains(r.URL.String(), key) || strings.Contains(r.URL.String(), Token(key)):
			t.Errorf("the probe gave the key away: %s %v", r.URL, r.Header)
		}
	}
	if first.URL.Query().Get("challenge") == second.URL.Query().Get("challenge") {
		t.Error("two probes sent the same challenge: a recorded answer would pass")
	}
}

// Without a key nothing could prove itself, so nothing is asked.
func TestAProbeWithoutAKeyAsksNothing(t *testing.T) {
	heard := make(chan int64, 1)
	url := rawServer(t, func(conn net.Conn) {
		n, _ := io.Copy(io.Discard, conn)
		heard <- n
	})
	_, _, err := Probe(context.Background(), url, "", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no secret") {
		t.Errorf("Probe without a key = %v; want it to say the lease carries no secret", err)
	}
	if n := <-heard; n != 0 {
		t.Errorf("the keyless probe sent the server %d bytes", n)
	}
}

func TestAProbeOnlySpeaksPlainHTTPToAURL(t *testing.T) {
	for _, base := range []string{"", "https://127.0.0.1:1", "127.0.0.1:1", "http://", "http://%zz"} {
		if _, _, err := Probe(context.Background(), base, New(), time.Second); err == nil || !strings.Contains(err.Error(), "not an http URL") {
			t.Errorf("Probe(%q) = %v; want it refused as not an http URL", base, err)
		}
	}
}

// A proxy configured for the process is not used: a probe goes to the
// URL's own host.
func TestAProbeIgnoresTheProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	key := New()
	srv := httptest.NewServer(identity(key, true))
	defer srv.Close()
	_, conn, err := Probe(context.Background(), srv.URL, key, 5*time.Second)
	if err != nil {
		t.Fatalf("Probe with a proxy set: %v", err)
	}
	conn.Close()
}

// rawServer accepts one connection and hands it to serve.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		serve(conn)
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// A server that accepts and never answers is given up on at the timeout,
// and the reason says so.
func TestASilentServerIsBoundedByTheTimeout(t *testing.T) {
	url := rawServer(t, func(conn net.Conn) { _, _ = io.Copy(io.Discard, conn) })
	_, _, err := Probe(context.Background(), url, New(), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("Probe of a silent server = %v; want no answer within the timeout", err)
	}
}

// What took a dead server's port may send an endless head: the probe
// reads a bounded amount of it and fails.
func TestAnEndlessAnswerIsReadWithinTheBound(t *testing.T) {
	url := rawServer(t, func(conn net.Conn) {
		_, _ = bufio.NewReader(conn).ReadString('\n') // the request line
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nX-Endless: ")
		_, _ = io.Copy(conn, endless{})
	})
	_, _, err := Probe(context.Background(), url, New(), 10*time.Second)
	if err == nil || strings.Contains(err.Error(), "no answer within") {
		t.Fatalf("Probe of an endless head = %v; want it to fail on what it read", err)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// After a proof the connection carries what follows: nothing of the
// answer is left unread, and the next request is answered on it.
func TestAProvedConnectionStaysOpenForWhatFollows(t *testing.T) {
	key := New()
	srv := httptest.NewServer(identity(key, true))
	defer srv.Close()
	_, conn, err := Probe(context.Background(), srv.URL, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := prove(conn, bufio.NewReader(conn), strings.TrimPrefix(srv.URL, "http://"), key, false); err != nil {
		t.Fatalf("a second proof on the connection the probe returned: %v", err)
	}
}

// The token and the proof are a contract between a server and clients
// of other builds: pinned to HMAC-SHA256 of the secret's hex text under
// their labels.
func TestTheTokenAndTheProofAreStable(t *testing.T) {
	s, c := strings.Repeat("00", Size), strings.Repeat("11", ChallengeSize)
	if got, want := Token(s), "e06699c1bb37c22eb7709ab30f75aefd1197bf5297f7317b26e2cbeef9a9ab54"; got != want {
		t.Errorf("Token = %s, want %s", got, want)
	}
	if got, want := Proof(s, c, true), "31f184cf9a2d7b109b8551e1d1181b8367a5bc1dbe2493f6701d95b7347d935a"; got != want {
		t.Errorf("Proof = %s, want %s", got, want)
	}
	if got := Authorization(s); got != "Bearer "+Token(s) {
		t.Errorf("Authorization = %s", got)
	}
}
