package node

import (
	"errors"
	"testing"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/testtemp"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// A flag beats the manifest, which beats the default its owner declares.
func TestTimingsComeFromTheFlagThenTheManifestThenTheDefault(t *testing.T) {
	got, err := ResolveTimings(layer.Timings{BusyGrace: 3 * time.Second, BridgeHeartbeat: 7 * time.Second},
		Timings{BusyGrace: time.Second, ProbeTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	want := Timings{
		BindGrace:     registry.DefaultBindGrace,
		ProbeTimeout:  500 * time.Millisecond,
		ElectionBound: machine.DefaultElectionBound,
		BusyGrace:     time.Second,
		IdleTimeout:   wire.DefaultIdleTimeout,
		Heartbeat:     7 * time.Second,
		JoinRetry:     machine.DefaultJoinRetry,
	}
	if got != want {
		t.Fatalf("ResolveTimings = %+v, want %+v", got, want)
	}
}

// The defaults work together; timings that do not are refused with one
// error naming each conflict as the user set it, and whether a flag is to
// blame.
func TestTimingsAreCheckedAsAWhole(t *testing.T) {
	if _, err := ResolveTimings(layer.Timings{}, Timings{}); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for _, c := range []struct {
		name     string
		manifest layer.Timings
		flags    Timings
		want     string
		flagged  bool
	}{
		{"a heartbeat slower than the idle timeout", layer.Timings{}, Timings{Heartbeat: 2 * time.Minute},
			"--heartbeat 2m is not shorter than --idle-timeout 90s (the default): an idle bridge's session would expire between beats", true},
		{"an idle timeout no longer than the heartbeat", layer.Timings{}, Timings{IdleTimeout: 20 * time.Second},
			"--heartbeat 20s (the default) is not shorter than --idle-timeout 20s: an idle bridge's session would expire between beats", true},
		{"in the manifest", layer.Timings{BridgeHeartbeat: 2 * time.Minute}, Timings{},
			"the manifest's server.bridge_heartbeat_seconds (2m) is not shorter than --idle-timeout 90s (the default): an idle bridge's session would expire between beats", false},
		{"a probe as long as the busy grace", layer.Timings{ProbeTimeout: 3 * time.Second}, Timings{BusyGrace: 3 * time.Second},
			"the manifest's server.probe_timeout_seconds (3s) is not shorter than --busy-grace 3s: a server would be given up for silent before one probe of it could time out", true},
		{"a busy grace past the election bound", layer.Timings{BusyGrace: 30 * time.Second}, Timings{},
			"the manifest's server.busy_grace_seconds (30s) is not shorter than --election-bound 20s (the default): the election would give up before a busy lease is taken over", false},
		{"two conflicts", layer.Timings{}, Timings{Heartbeat: 5 * time.Minute, ProbeTimeout: 1500 * time.Millisecond, BusyGrace: time.Second},
			"--heartbeat 5m is not shorter than --idle-timeout 90s (the default): an idle bridge's session would expire between beats; " +
				"--probe-timeout 1.5s is not shorter than --busy-grace 1s: a server would be given up for silent before one probe of it could time out", true},
		{"a negative flag", layer.Timings{}, Timings{IdleTimeout: -time.Second}, "--idle-timeout -1s is not a positive duration", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ResolveTimings(c.manifest, c.flags)
			var te *TimingsError
			if !errors.As(err, &te) || !errors.Is(err, ErrTimings) {
				t.Fatalf("err = %v, want a TimingsError", err)
			}
			if err.Error() != c.want || te.Flagged != c.flagged {
				t.Errorf("err = %q (flagged %v)\nwant  %q (flagged %v)", err, te.Flagged, c.want, c.flagged)
			}
		})
	}
}

// A node is given timings that work together or none: New refuses the rest.
func TestANodeRefusesTimingsThatDoNotWorkTogether(t *testing.T) {
	_, err := New(Config{Checkout: &Checkout{Root: testtemp.Dir(t), Profile: "default"}, Times: Timings{Heartbeat: time.Hour}})
	if !errors.Is(err, ErrTimings) {
		t.Fatalf("New = %v, want ErrTimings", err)
	}
}
