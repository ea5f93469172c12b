package scenarios

// The timings are checked as a whole at start: a set that cannot work
// together is refused, before any lease is taken, with one message naming
// each conflict as the user set it (a flag, or the manifest's key).

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTimingsThatCannotWorkTogetherAreRefusedAtStart(t *testing.T) {
	withServer := func(section string) string { return checkoutTimed(t, section) }
	for _, tc := range []struct {
		name string
		dir  string
		args []string
		code int
		says string
	}{
		{"a heartbeat slower than the idle timeout", checkout(t), []string{"--heartbeat", "2m", "--http-port", "0"}, 2,
			"--heartbeat 2m is not shorter than --idle-timeout 90s (the default): an idle bridge's session would expire between beats"},
		{"serve, a probe as long as the busy grace", checkout(t), []string{"serve", "--probe-timeout", "3s", "--busy-grace", "3s", "--http-port", "0"}, 2,
			"--probe-timeout 3s is not shorter than --busy-grace 3s"},
		{"the manifest's heartbeat", withServer("  bridge_heartbeat_seconds: 120\n"), []string{"--http-port", "0"}, 10,
			"the manifest's server.bridge_heartbeat_seconds (2m) is not shorter than --idle-timeout 90s (the default)"},
		{"the manifest's idle timeout, standalone", withServer("  session_idle_timeout_seconds: 5\n"), []string{"--standalone"}, 10,
			"--heartbeat 20s (the default) is not shorter than the manifest's server.session_idle_timeout_seconds (5s)"},
		{"status", withServer("  busy_grace_seconds: 30\n"), []string{"status"}, 10,
			"the manifest's server.busy_grace_seconds (30s) is not shorter than --election-bound 20s (the default)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runOnce(t, tc.dir, "", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s", code, tc.code, tc.says, stderr)
			}
			if stdout != "" {
				t.Fatalf("stdout carried %q", stdout)
			}
			noLease(t, tc.dir)
		})
	}
}

// Timings that keep every rule serve the client, however short: an
// election bound no longer than the lease's own re-reading interval (100ms)
// is one of them, from the manifest as from the flags.
func TestShortTimingsThatWorkTogetherServeTheClient(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  string
		args []string
	}{
		{"from the manifest", checkoutTimed(t, "  election_bound_seconds: 0.1\n  busy_grace_seconds: 0.05\n  probe_timeout_seconds: 0.02\n"), nil},
		{"from the flags", checkout(t), []string{"--election-bound", "100ms", "--busy-grace", "50ms", "--probe-timeout", "20ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := shared(t, tc.dir, tc.args...)
			initialize(t, p, "short")
			var repo struct {
				State string `json:"state"`
			}
			if isErr, text, err := p.CallTool(ctx(t), "majordomus_repository", nil, &repo); err != nil || isErr || repo.State != "ok" {
				t.Fatalf("majordomus_repository: %v %v %s", err, isErr, text)
			}
			p.CloseStdin()
			exitsWith(t, p, 0)
		})
	}
	t.Run("a heartbeat of a nanosecond", func(t *testing.T) {
		dir := checkout(t)
		a := shared(t, dir)
		initialize(t, a, "claude-code")
		serverURL(t, a)
		b := bridged(t, dir, "codex", "--heartbeat", "1ns")
		if _, err := b.Call(ctx(t), "ping", nil); err != nil {
			t.Fatal(err)
		}
		b.CloseStdin()
		exitsWith(t, b, 0)
	})
}

// checkoutTimed is a checkout whose manifest has the server section given
// (its indented lines): timings every process of the checkout reads.
func checkoutTimed(t *testing.T, section string) string {
	t.Helper()
	dir := checkout(t)
	manifest := filepath.Join(dir, ".ai", "manifest.yaml")
	body, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, append(body, []byte("\nserver:\n"+section)...), 0o644); err != nil {
		t.Fatal(err)
	}
	layerEdited(t, dir)
	return dir
}
