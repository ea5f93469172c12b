package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/internal/secret"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/registry/runtimes"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
)

// A leaseholder whose client has left and whose lease is then lost is
// lease-lost: the probe and majordomus_server say so, new sessions are
// refused with where to go, the session it had (a plain HTTP one) goes on
// being served, its registry row says it is draining, and it ends with its
// last session, removing that row.
func TestALostLeaseIsServedUntilItsLastSessionEnds(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("registered this server in the fleet registry")
	url := b.url
	if row := registryRow(t, co); row.State != runtimes.StateLeaseholder || row.URL != url {
		t.Fatalf("the registry row is %+v; want the leaseholder at %s", row, url)
	}
	plain := openSession(t, url) // holds the lease-lost server (R6)
	a.awaitLog("http session opened")
	a.client.close()
	a.awaitState(machine.OwnerLeft)

	b.set("x", "http://127.0.0.1:1")
	a.awaitState(machine.LeaseLost)
	a.awaitLog("recorded in the fleet registry that this server lost its lease")
	if row := registryRow(t, co); row.State != runtimes.StateLeaseLost {
		t.Errorf("the registry row is %+v; want it draining", row)
	}
	if d := a.node.describe(); d.Leaseholder || len(d.Findings) == 0 {
		t.Errorf("lease-lost, the node describes itself as %+v", d)
	}
	saysLost(t, url, "http://127.0.0.1:1")
	if text := toolOn(t, url, plain, "majordomus_server"); !strings.Contains(text, "no longer holds the lease") {
		t.Errorf("majordomus_server says %s", text)
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

// A leaseholder whose lease is lost hands its own client over at once,
// whatever other sessions its server has (convergence): here the process
// wins the lease again, and its new server runs beside the old one. The
// old server serves its plain session until it ends, says it is lease-lost
// and refuses new sessions, naming the new server; then it stops and
// leaves the registry. The process, its client gone, ends only with it.
func TestALeaseholderHandsItsClientOverWhileItsServerDrains(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	id := a.client.initialize()
	a.awaitLog("registered this server in the fleet registry")
	old := b.url
	plain := openSession(t, old)
	// its announcement is in the checkout's state, which the next term keeps
	mcpRequest(t, http.MethodPost, old, plain, strings.NewReader(
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"the release notes"}}}`)).Body.Close()
	moving, answer := postInitialize(t, old) // a bridge's, say
	movingPeer := peerOf(t, answer)

	b.set("", "")
	a.awaitLog("this server serves its other sessions until the last ends")
	a.awaitLog("took over as the shared server")
	current := b.url
	if current == "" || current == old || a.node.State() != machine.Leaseholder {
		t.Fatalf("after the hand-over a is %s, the lease names %q (the old server was %s)", a.node.State(), current, old)
	}
	a.client.awaitNote(nil, "this process took over as the checkout's shared server")
	if got := a.client.caller(); got != id {
		t.Errorf("the client was %s and is %s", id, got)
	}
	saysLost(t, old, current)
	// The moving session's client moves to the current server, on the same
	// board, before its old session ends there: it keeps its peer id.
	moved, answer := claimInitialize(t, current, movingPeer)
	if peerOf(t, answer) != movingPeer {
		t.Errorf("claiming %s on the current server was answered %s", movingPeer, answer)
	}
	deleteSession(t, old, moving)
	deleteSession(t, current, moved)

	a.client.close()
	a.awaitState(machine.Exited)
	for range 3 {
		text := toolOn(t, old, plain, "majordomus_repository")
		if !strings.Contains(text, `"result"`) || strings.Contains(text, `"isError":true`) {
			t.Fatalf("the old server answered its session %s", text)
		}
		if strings.Contains(text, "this process took over") { // the own client's news, not the plain session's
			t.Fatalf("the plain session was told the own client's news: %s", text)
		}
	}
	if len(a.done) != 0 {
		t.Fatal("the node ended while its old server still served a session")
	}
	deleteSession(t, old, plain)
	a.awaitLog("shared server stopped with its last session")
	if res := a.wait(); res.err != nil {
		t.Fatalf("the node ended with %v", res.err)
	}
	if rows, err := runtimes.Read(context.Background(), co.Registry); err != nil || len(rows) != 0 {
		t.Errorf("after the end the registry holds %+v (%v)", rows, err)
	}
}

// A signal ends a process at once, the lease-lost server it left serving
// a session with it: that server stops and leaves the registry, whether
// the machine still runs or has ended (its client gone) and the process
// only waits for that server. The process ends of the signal.
func TestASignalEndsTheServerADrainLeftServing(t *testing.T) {
	for _, clientGone := range []bool{false, true} {
		t.Run(fmt.Sprintf("client gone: %v", clientGone), func(t *testing.T) {
			co, b := exampleCheckout(t), newBoard(t)
			a := start(t, "a", co, b, true)
			a.client.initialize()
			a.awaitLog("registered this server in the fleet registry")
			old := b.url
			openSession(t, old) // never ended: it would hold the server until the idle timeout
			a.awaitLog("http session opened")
			b.set("x", "http://127.0.0.1:1")
			a.awaitLog("this server serves its other sessions until the last ends")
			if clientGone {
				a.client.close()
				a.awaitState(machine.Exited)
			}
			a.node.Signal("SIGTERM")
			if res := a.wait(); res.outcome.Signal != "SIGTERM" {
				t.Fatalf("the node ended with %+v", res)
			}
			a.awaitLog("shared server stopped with its last session")
			if _, err := registry.FetchIdentity(context.Background(), old, keyAt(old), wait); err == nil {
				t.Error("the old server still answers after the signal")
			}
			if rows, err := runtimes.Read(context.Background(), co.Registry); err != nil || len(rows) != 0 {
				t.Errorf("after the signal the registry holds %+v (%v)", rows, err)
			}
		})
	}
}

// saysLost checks that the lease-lost server at url says so: its probe,
// and a new session refused with where the current server is.
func saysLost(t *testing.T, url, current string) {
	t.Helper()
	var id struct{ Leaseholder bool }
	raw, err := registry.FetchIdentity(context.Background(), url, keyAt(url), wait)
	if err != nil || json.Unmarshal(raw, &id) != nil || id.Leaseholder {
		t.Errorf("the probe answered %s (%v); want leaseholder false", raw, err)
	}
	_, refusal := postInitialize(t, url)
	if !strings.Contains(refusal, "lease_lost") || !strings.Contains(refusal, current) {
		t.Errorf("a new session was answered %s; want lease_lost naming the current server %s", refusal, current)
	}
}

// toolOn calls tool in the plain HTTP session sid at url and returns the
// answer as sent.
func toolOn(t *testing.T, url, sid, tool string) string {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	resp := mcpRequest(t, http.MethodPost, url, sid, strings.NewReader(body))
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return string(out)
}

// `serve` has no client of its own: once its lease is lost, it ends with
// its last session.
func TestServeEndsOnceItsLeaseIsLost(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	s := start(t, "serve", co, b, false)
	s.awaitLog("shared server listening")
	b.set("x", "")
	if res := s.wait(); res.err != nil {
		t.Fatalf("serve ended with %v", res.err)
	}
}

// A leaseholder that cannot write the registry serves all the same.
func TestAnUnwritableRegistryStopsNoServer(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	co.Registry = co.Root + "/.ai/manifest.yaml/registry.db" // under a file: no directory can be made
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("cannot register this server in the fleet registry")
	if text := a.client.tool("majordomus_server", map[string]any{}, nil); !strings.Contains(text, `"leaseholder": true`) && !strings.Contains(text, `"leaseholder":true`) {
		t.Errorf("majordomus_server says %s", text)
	}
}

// A leaseholder that has no registry path at all says why, naming no empty
// path.
func TestARegistryWithNoPathIsExplained(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	co.Registry = ""
	t.Setenv(runtimes.RegistryEnv, "relative/registry.db") // refused: not absolute
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitLog("cannot register this server in the fleet registry: runtimes: no runtime registry path")
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
	return claimInitialize(t, url, "")
}

// claimInitialize is postInitialize claiming peer id claim, when set, as
// a bridge that opens its client's session again does.
func claimInitialize(t *testing.T, url, claim string) (sid, answer string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"plain","version":"1"}}}`
	header := http.Header{}
	carry.SetClaim(header, carry.WithPeerClaim(context.Background(), claim))
	resp := mcpRequest(t, http.MethodPost, url, "", strings.NewReader(body), header)
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Mcp-Session-Id"), string(out)
}

// peerOf is the peer id an initialize answer gives its session.
func peerOf(t *testing.T, answer string) string {
	t.Helper()
	var init struct {
		Result struct {
			Meta map[string]string `json:"_meta"`
		}
	}
	if err := json.Unmarshal([]byte(answer), &init); err != nil || init.Result.Meta[surface.PeerMeta] == "" {
		t.Fatalf("initialize answered %s", answer)
	}
	return init.Result.Meta[surface.PeerMeta]
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

// mcpRequest sends one request to url's /mcp, in session sid when set,
// with what header adds.
func mcpRequest(t *testing.T, method, url, sid string, body io.Reader, header ...http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url+"/mcp", body)
	for _, h := range header {
		maps.Copy(req.Header, h)
	}
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
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	id := a.client.initialize()
	a.awaitLog("shared server listening")
	b.set("", "")
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
	co, b := exampleCheckout(t), newBoard(t)
	d := start(t, "d", co.fresh(), b, true)
	d.awaitLog("shared server listening")
	durl := b.url
	// a wins, and by the time it publishes the lease is d's again: as if d
	// took it back meanwhile. d never sees it lost, so its server stays.
	b.force(machine.Observation{Class: machine.ClassWon})
	a := start(t, "a", co, b, true)
	a.awaitLog("taken over while this server was starting")
	a.awaitLog("handing this client over")
	a.awaitLog("bridging this stdio session to it") // to d's server
	if a.node.State() != machine.Attached || a.node.describe().URL != durl {
		t.Fatalf("a is %s at %s, want attached to %s", a.node.State(), a.node.describe().URL, durl)
	}
}
