package scenarios

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A 2026-07-28 client need not send server/discover: one whose first
// request is its announcement, served in process by its own leaseholder,
// keeps its peer id when that server loses its lease and the client is
// carried onto whatever serves next, and no number is drawn for it.
func TestAModernClientThatNeverDiscoveredKeepsItsIDAcrossAHandOver(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	if r, err := a.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_announce",
		"arguments": map[string]any{"intent": "the parser", "scope": []string{"lib"}}}, "modern-agent")); err != nil || r.Error != nil {
		t.Fatalf("majordomus_announce: %+v %v", r.Error, err)
	}
	serverURL(t, a)
	peer := modernCaller(t, a)
	counter := peerCounter(t, dir)

	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	board := modernBoard(t, a)
	if board.Caller != peer {
		t.Errorf("the client was %s and is %s after the hand-over: %+v", peer, board.Caller, board.Peers)
	}
	for _, p := range board.Peers {
		if p.ID != board.Caller && p.Announcement != nil && p.Announcement.Intent == "the parser" {
			t.Errorf("the client's announcement is on the board twice, under %s and %s: %+v", p.ID, board.Caller, board.Peers)
		}
	}
	if got := peerCounter(t, dir); got != counter {
		t.Errorf("the peer counter went from %d to %d over the hand-over", counter, got)
	}
}

// The same client bridged keeps its id when its process takes the server
// over, and again when that server in turn loses its lease.
func TestAModernClientThatNeverDiscoveredKeepsItsIDAcrossTakeOvers(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	m := shared(t, dir)
	if r, err := m.Call(ctx(t), "tools/call", withMeta(map[string]any{"name": "majordomus_announce",
		"arguments": map[string]any{"intent": "the parser", "scope": []string{"lib"}}}, "modern-agent")); err != nil || r.Error != nil {
		t.Fatalf("majordomus_announce: %+v %v", r.Error, err)
	}
	peer := modernCaller(t, m)
	counter := peerCounter(t, dir)

	a.Signal(syscall.SIGKILL)
	a.Wait(ctx(t))
	if _, err := m.WaitLog(ctx(t), "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if got := modernCaller(t, m); got != peer {
		t.Fatalf("the client was %s and is %s after the take-over", peer, got)
	}
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitLogs(ctx(t), 2, "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if got := modernCaller(t, m); got != peer {
		t.Errorf("the client was %s and is %s after its server lost its lease", peer, got)
	}
	if got := peerCounter(t, dir); got != counter {
		t.Errorf("the peer counter went from %d to %d over the take-overs", counter, got)
	}
}

// A 2026-07-28 client says who it is on every request, and may say it
// differently from one request to the next (a new clientInfo version):
// the board shows it as its last request named it, and still does once
// its session was carried on, whether it was served in process (its
// server lost its lease, and its own process took over) or bridged (its
// server was killed, and its process took over), silent since.
func TestAModernClientIsNamedAsItsLastRequestNamedItAfterAMove(t *testing.T) {
	as := func(version string) map[string]any {
		meta := mcpclient.ModernMeta("modern-agent")
		meta["io.modelcontextprotocol/clientInfo"] = map[string]any{"name": "modern-agent", "version": version}
		return meta
	}
	named := func(p *mcpclient.Process) {
		t.Helper()
		for i, method := range []string{"server/discover", "prompts/list"} {
			if r, err := p.Call(ctx(t), method, mcpclient.WithMeta(nil, as(fmt.Sprint(i+1)))); err != nil || r.Error != nil {
				t.Fatalf("%s: %+v %v", method, r.Error, err)
			}
		}
	}
	for _, mode := range []string{"in process", "bridged"} {
		t.Run(mode, func(t *testing.T) {
			dir := checkout(t)
			a := shared(t, dir)
			m := a
			if mode == "bridged" {
				initialize(t, a, "claude-code")
				serverURL(t, a)
				m = shared(t, dir)
				attached(t, m)
			}
			named(m)
			if mode == "bridged" {
				a.Signal(syscall.SIGKILL)
				a.Wait(ctx(t))
			} else {
				serverURL(t, a)
				if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := m.WaitLog(ctx(t), "took over as the shared server"); err != nil {
				t.Fatal(err)
			}
			c := connect(t, dir)
			status, _, body := httpDo(t, http.MethodGet, c.base()+"/board/api/peers", nil, c.with(nil))
			var board struct {
				Peers []struct {
					Client   struct{ Name, Version string }
					Attached bool
				}
			}
			if status != http.StatusOK || json.Unmarshal(body, &board) != nil {
				t.Fatalf("GET /board/api/peers: %d %s", status, body)
			}
			found := false
			for _, p := range board.Peers {
				if p.Attached && p.Client.Name == "modern-agent" {
					found = true
					if p.Client.Version != "2" {
						t.Errorf("after the move the board names the client version %s; its last request said 2: %s", p.Client.Version, body)
					}
				}
			}
			if !found {
				t.Errorf("the client is not on the board after the move: %s", body)
			}
		})
	}
}

// A request that names, as the session its client opened too, the
// leaseholder's own client's in-process session is not that client's: a
// session is claimed only by naming it, and only its client was told its
// name. A direct 2026-07-28 request that announces so is a peer of its
// own, and the leaseholder's client keeps its announcement.
func TestARequestNamingTheLeaseholdersOwnSessionIsNotItsClients(t *testing.T) {
	t.Parallel()
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	call(t, a, "majordomus_announce", map[string]any{"intent": "its own", "scope": []string{"docs"}})
	own := peersOf(t, a).Caller

	server := connect(t, dir)
	forged := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"majordomus_announce","arguments":{"intent":"forged","scope":["src"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"forger","version":"1"}}}}`)
	headers := server.with(map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "majordomus_announce",
		"Majordomus-Session": "stdio"})
	if status, _, body := httpDo(t, http.MethodPost, server.URL, forged, headers); status != 200 || strings.Contains(string(body), `"isError":true`) {
		t.Fatalf("the forged announcement: %d %s", status, body)
	}
	for _, p := range peersOf(t, a).Peers {
		if p.ID == own && (p.Announcement == nil || p.Announcement.Intent != "its own") {
			t.Fatalf("the leaseholder's client %s now announces %+v", own, p.Announcement)
		}
	}
}
