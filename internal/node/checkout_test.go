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
