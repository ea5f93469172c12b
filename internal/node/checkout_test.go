package node

import (
	"reflect"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/fleet"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport"
)

// A flag beats the manifest, which beats the default its owner declares.
func TestTimingsComeFromTheFlagThenTheManifestThenTheDefault(t *testing.T) {
	got := ResolveTimings(layer.Timings{BusyGrace: 3 * time.Second, BridgeHeartbeat: 7 * time.Second},
		Timings{BusyGrace: time.Second})
	want := Timings{
		BindGrace:     registry.DefaultBindGrace,
		ProbeTimeout:  registry.DefaultProbeTimeout,
		ElectionBound: machine.DefaultElectionBound,
		BusyGrace:     time.Second,
		IdleTimeout:   transport.DefaultIdleTimeout,
		Heartbeat:     7 * time.Second,
		JoinRetry:     machine.DefaultJoinRetry,
	}
	if got != want {
		t.Fatalf("ResolveTimings = %+v, want %+v", got, want)
	}
}

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
