package node

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

func TestRosterOfTheManifest(t *testing.T) {
	if got := RosterOf(layer.Manifest{}); !reflect.DeepEqual(got, []fleet.Configured{{Profile: "default", RoleKnown: true}}) {
		t.Errorf("no profiles: %+v", got)
	}
	m := layer.Manifest{Profiles: []layer.Profile{{Name: "author", Role: "writer"}, {Name: "review"}}}
	want := []fleet.Configured{{Profile: "author", Role: "writer", RoleKnown: true}, {Profile: "review", RoleKnown: true}}
	if got := RosterOf(m); !reflect.DeepEqual(got, want) {
		t.Errorf("RosterOf = %+v", got)
	}
	if profileRole(m, "author") != "writer" || profileRole(m, "other") != "" {
		t.Error("profileRole")
	}
}

// What a process says of itself follows its state: only a leaseholder that
// serves at a URL holds the lease, and a lost lease is a finding.
func TestAProcessDescribesItselfByItsState(t *testing.T) {
	for _, c := range []struct {
		state       machine.State
		url         string
		leaseholder bool
		findings    int
	}{
		{machine.Electing, "", false, 0},
		{machine.Leaseholder, "", false, 0}, // not serving yet
		{machine.Leaseholder, "http://127.0.0.1:9", true, 0},
		{machine.OwnerLeft, "http://127.0.0.1:9", true, 0},
		{machine.LeaseLost, "http://127.0.0.1:9", false, 1},
		{machine.Attached, "http://127.0.0.1:9", false, 0},
		{machine.Alone, "", false, 0},
	} {
		d := describeAs(string(c.state), c.url, "/lease", "default")
		if d.Role != string(c.state) || d.Leaseholder != c.leaseholder || len(d.Findings) != c.findings || d.URL != c.url {
			t.Errorf("%s at %q: %+v", c.state, c.url, d)
		}
	}
}

// A client served alone is said to be (instructions, notice, findings)
// until a server takes it: a try to share that wins the lease is a
// leaseholder before its server starts, or fails to.
func TestAClientServedAloneIsSaidToBeWhileATryToShareRuns(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.client.initialize()
	a.awaitState(machine.Leaseholder)
	why := "binding 10.255.255.1:8741: cannot assign requested address"
	a.node.session.alone.Store(&why) // as a try from alone leaves it while the server starts
	defer a.node.session.alone.Store(nil)
	if d := a.node.describe(); d.Alone != why {
		t.Errorf("a leaseholder whose client is still served alone describes itself as %+v", d)
	}
}

// A process that serves the layer again (a take-over, after it bridged)
// answers from its first request with what changed while it bridged: the
// rebuild that caught its index up is in what its surface serves once load
// returns, not only once the watch that follows begins.
func TestALayerServedAgainIsServedCaughtUpFromItsFirstAnswer(t *testing.T) {
	co := exampleCheckout(t)
	life, end := context.WithCancel(context.Background())
	t.Cleanup(func() { end(); co.unwatched() })
	describe := func() surface.Process { return surface.Process{Role: "leaseholder"} }
	if _, err := co.load(life, describe, time.Minute); err != nil {
		t.Fatal(err)
	}
	co.unwatch() // it bridges its client to another's server
	glossary := "---\nid: glossary\nkind: knowledge\ntitle: Glossary\n---\n\nedited while it bridged\n"
	if err := os.WriteFile(filepath.Join(co.Root, ".ai/repo/knowledge/glossary.md"), []byte(glossary), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := co.load(life, describe, time.Minute) // it serves again
	if err != nil {
		t.Fatal(err)
	}
	read := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"majordomus://knowledge/glossary"}}`
	answer, _ := json.Marshal(srv.surface.MCP.HandleMessage(context.Background(), json.RawMessage(read)))
	if !strings.Contains(string(answer), "edited while it bridged") {
		t.Fatalf("served again at generation %d, the glossary reads as before it bridged: %s", srv.layer.Current().Generation, answer)
	}
}
