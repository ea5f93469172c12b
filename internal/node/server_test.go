package node

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
)

// A leaseholder whose lease another process took becomes lease-lost: its
// probe and majordomus_server say so, new sessions are refused with where
// to go, the session it had (a plain HTTP one) goes on being served, its
// registry row says it is draining, and it ends with its last session once
// its client left, removing that row.
func TestALostLeaseIsServedUntilItsLastSessionEnds(t *testing.T) {
	co, b := exampleCheckout(t), newBoard()
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("registered this server in the fleet registry")
	url := b.url
	if row := registryRow(t, co); row.State != runtimes.StateLeaseholder || row.URL != url {
		t.Fatalf("the registry row is %+v; want the leaseholder at %s", row, url)
	}
	plain := openSession(t, url) // holds the lease-lost server (R6)
	a.awaitLog("http session opened")

	b.mu.Lock()
	b.holder, b.url = "x", "http://127.0.0.1:1"
	b.changeLocked()
	b.mu.Unlock()
	a.awaitState(machine.LeaseLost)
	a.awaitLog("recorded in the fleet registry that this server lost its lease")
	if row := registryRow(t, co); row.State != runtimes.StateLeaseLost {
		t.Errorf("the registry row is %+v; want it draining", row)
	}
	if d := a.node.describe(); d.Leaseholder || len(d.Findings) == 0 {
		t.Errorf("lease-lost, the node describes itself as %+v", d)
	}
	var id struct{ Leaseholder bool }
	raw, err := registry.FetchIdentity(context.Background(), url, keyAt(url), wait)
	if err != nil || json.Unmarshal(raw, &id) != nil || id.Leaseholder {
		t.Errorf("the probe answered %s (%v); want leaseholder false", raw, err)
	}
	_, refusal := postInitialize(t, url)
	if !strings.Contains(refusal, "lease_lost") || !strings.Contains(refusal, "http://127.0.0.1:1") {
		t.Errorf("a new session was answered %s; want lease_lost naming the current server", refusal)
	}
	if text := a.client.tool("majordomus_server", map[string]any{}, nil); !strings.Contains(text, "no longer holds the lease") {
		t.Errorf("majordomus_server says %s", text)
	}

	a.client.close()
	a.awaitLog("input ended") // the plain session remains: still serving
	if a.node.State() != machine.LeaseLost {
		t.Fatalf("with a session left, the node is %s", a.node.State())
	}
	deleteSession(t, url, plain)
	if res := a.wait(); res.err != nil {
		t.Fatalf("the node ended with %v", res.err)
	}
	rows, err := runtimes.Read(context.Background(), co.Registry)
	if err != nil || len(rows) != 0 {
		t.Errorf("after the end the registry holds %+v (%v)", rows, err)
	}
}

// `serve` has no client of its own: once its lease is lost, it ends with
// its last session.
func TestServeEndsOnceItsLeaseIsLost(t *testing.T) {
	co, b := exampleCheckout(t), newBoard()
	s := start(t, "serve", co, b, false)
	s.awaitLog("shared server listening")
	b.mu.Lock()
	b.holder, b.url = "x", ""
	b.changeLocked()
	b.mu.Unlock()
	if res := s.wait(); res.err != nil {
		t.Fatalf("serve ended with %v", res.err)
	}
}

// A leaseholder that cannot write the registry serves all the same.
func TestAnUnwritableRegistryStopsNoServer(t *testing.T) {
	co, b := exampleCheckout(t), newBoard()
	co.Registry = co.Root + "/.ai/manifest.yaml/registry.db" // under a file: no directory can be made
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("cannot register this server in the fleet registry")
	if text := a.client.tool("majordomus_server", map[string]any{}, nil); !strings.Contains(text, `"leaseholder": true`) && !strings.Contains(text, `"leaseholder":true`) {
		t.Errorf("majordomus_server says %s", text)
	}
}

// RunStandalone serves its client and ends when stdin does.
func TestStandaloneServesUntilStdinEnds(t *testing.T) {
	co := exampleCheckout(t)
	c := newClient(t, "alone")
	done := make(chan error, 1)
	go func() {
		done <- RunStandalone(context.Background(), Config{Checkout: co, Stdin: c.stdin, Stdout: c.stdout})
	}()
	c.initialize()
	if text := c.tool("majordomus_server", map[string]any{}, nil); !strings.Contains(text, "standalone") {
		t.Errorf("majordomus_server says %s", text)
	}
	c.close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("standalone did not end with its stdin")
	}
}

// registryRow is the one row of the checkout's registry.
func registryRow(t *testing.T, co *Checkout) fleet.Row {
	t.Helper()
	rows, err := runtimes.Read(context.Background(), co.Registry)
	if err != nil || len(rows) != 1 {
		t.Fatalf("the registry holds %+v (%v); want one row", rows, err)
	}
	return rows[0]
}

// postInitialize opens a new session at url as a plain HTTP client
// would, and returns the session's id ("" when none) and the answer.
func postInitialize(t *testing.T, url string) (sid, answer string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`
	resp := mcpRequest(t, http.MethodPost, url, "", strings.NewReader(body))
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), string(out)
}

// openSession opens a plain HTTP session at url and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	sid, answer := postInitialize(t, url)
	if sid == "" {
		t.Fatalf("no session opened: %s", answer)
	}
	return sid
}

// deleteSession ends the plain HTTP session sid at url.
func deleteSession(t *testing.T, url, sid string) {
	t.Helper()
	mcpRequest(t, http.MethodDelete, url, sid, nil).Body.Close()
}

// mcpRequest sends one request to url's /mcp, in session sid when set.
func mcpRequest(t *testing.T, method, url, sid string, body io.Reader) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url+"/mcp", body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", secret.Authorization(keyAt(url)))
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// A leaseholder whose lease vanished hands its client over to itself: it
// wins the election again, and its new server admits new sessions (the
// old term's refusal does not outlive it), even on the same port.
func TestALeaseWonAgainAdmitsNewSessions(t *testing.T) {
	co, b := exampleCheckout(t), newBoard()
	a := start(t, "a", co, b, true)
	id := a.client.initialize()
	a.awaitLog("shared server listening")
	b.mu.Lock()
	b.holder, b.url = "", ""
	b.changeLocked()
	b.mu.Unlock()
	a.awaitLog("handing this client over")
	a.awaitLog("took over as the shared server")
	url := b.url
	if url == "" || a.node.State() != machine.Leaseholder {
		t.Fatalf("after the hand-over a is %s and the lease names %q", a.node.State(), url)
	}
	openSession(t, url) // admitted, not refused with lease_lost
	var ident struct{ Leaseholder bool }
	raw, err := registry.FetchIdentity(context.Background(), url, keyAt(url), wait)
	if err != nil || json.Unmarshal(raw, &ident) != nil || !ident.Leaseholder {
		t.Errorf("the probe answered %s (%v)", raw, err)
	}
	if got := a.client.caller(); got != id {
		t.Errorf("the client was %s and is %s", id, got)
	}
}

// A lease taken over while this process's server was starting leaves the
// server lease-lost from the start; its client is handed over (here to
// the process that took the lease), not served alone.
func TestALeaseTakenWhileStartingHandsTheClientOver(t *testing.T) {
	co, b := exampleCheckout(t), newBoard()
	d := start(t, "d", co.fresh(), b, true)
	d.awaitLog("shared server listening")
	durl := b.url
	b.mu.Lock()
	b.holder, b.url = "", ""
	b.mu.Unlock()
	b.gate = make(chan struct{}) // a wins, then waits before it reports so…
	b.attempts = make(chan string, 4)
	a := start(t, "a", co, b, true)
	<-b.attempts // a's attempt, which takes the lease
	b.mu.Lock()
	b.holder, b.url = "d", durl // …and d takes it back meanwhile
	b.changeLocked()
	b.mu.Unlock()
	close(b.gate)
	a.awaitLog("handing this client over")
	a.awaitLog("bridging this stdio session to it") // to d's server
	if a.node.State() != machine.Attached || a.node.describe().URL != durl {
		t.Fatalf("a is %s at %s, want attached to %s", a.node.State(), a.node.describe().URL, durl)
	}
}
