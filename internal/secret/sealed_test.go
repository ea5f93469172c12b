package secret

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestASealedAnswerOpensOnlyForItsSecretAndChallenge(t *testing.T) {
	key, challenge := New(), NewChallenge()
	sealed, err := Seal(key, challenge, []byte(`{"board":"p1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := Open(key, challenge, sealed); err != nil || string(plain) != `{"board":"p1"}` {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	again, _ := Seal(key, challenge, []byte(`{"board":"p1"}`))
	if again == sealed {
		t.Error("two seals of the same text are the same: the nonce is not fresh")
	}
	tampered := []byte(sealed)
	tampered[len(tampered)/2] ^= 1
	for name, c := range map[string]struct{ key, challenge, sealed string }{
		"another secret":    {New(), challenge, sealed},
		"another challenge": {key, NewChallenge(), sealed},
		"tampered":          {key, challenge, string(tampered)},
		"not base64":        {key, challenge, "%%%"},
		"too short":         {key, challenge, "AAAA"},
	} {
		if plain, err := Open(c.key, c.challenge, c.sealed); err == nil {
			t.Errorf("%s: opened as %q", name, plain)
		}
	}
}

// A probe believes what a server sealed into its answer only when it opens
// under the lease's secret and the probe's challenge, and makes the claim
// the proof proved; anything else leaves the plain answer.
func TestAProbeReadsTheSealedIdentityOnlyWhenItOpens(t *testing.T) {
	key := New()
	for _, tc := range []struct {
		name   string
		sealed func(challenge string) string
		whole  bool
	}{
		{"sealed for it", func(c string) string { s, _ := Seal(key, c, []byte(`{"leaseholder":true,"board":"p1"}`)); return s }, true},
		{"another claim", func(c string) string { s, _ := Seal(key, c, []byte(`{"leaseholder":false,"board":"p1"}`)); return s }, false},
		{"another challenge", func(string) string { s, _ := Seal(key, NewChallenge(), []byte(`{"leaseholder":true}`)); return s }, false},
		{"another secret", func(c string) string { s, _ := Seal(New(), c, []byte(`{"leaseholder":true}`)); return s }, false},
		{"none", func(string) string { return "" }, false},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c := r.URL.Query().Get("challenge")
			if !AsksSealed(r.URL.Query().Get("seal"), key, c) {
				t.Errorf("%s: the probe did not ask for what is sealed for it: %s", tc.name, r.URL)
			}
			fmt.Fprintf(w, `{"name":"majordomus","leaseholder":true,"proof":%q,"sealed":%q}`, Proof(key, c, true), tc.sealed(c))
		}))
		c, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		body, err := prove(c, bufio.NewReader(c), strings.TrimPrefix(srv.URL, "http://"), key, true)
		c.Close()
		srv.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := strings.Contains(string(body), `"board"`); got != tc.whole {
			t.Errorf("%s: the probe read %s", tc.name, body)
		}
	}
}

// Sealing costs the server, so only the probes that need it ask for it
// (an election's, and a bridge's dial, which proves its owner with it);
// Probe, a liveness probe's, does not.
func TestOnlyTheSealedProbeAsksForTheSeal(t *testing.T) {
	key := New()
	asked := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := r.URL.Query().Get("challenge")
		asked <- AsksSealed(r.URL.Query().Get("seal"), key, c)
		fmt.Fprintf(w, `{"name":"majordomus","leaseholder":true,"proof":%q}`, Proof(key, c, true))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name  string
		probe func(context.Context, string, string, time.Duration) (json.RawMessage, net.Conn, error)
		asks  bool
	}{{"Probe", Probe, false}, {"ProbeSealed", ProbeSealed, true}} {
		_, conn, err := tc.probe(context.Background(), srv.URL, key, 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		conn.Close()
		if got := <-asked; got != tc.asks {
			t.Errorf("%s asked for the seal: %v, want %v", tc.name, got, tc.asks)
		}
	}
}
