package node

import (
	"reflect"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
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
