package machine

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTriggerFor(t *testing.T) {
	for _, tc := range []struct {
		obs         Observation
		want        Trigger
		wantFailure string
	}{
		{Observation{Class: ClassWon}, LeaseWon, ""},
		{Observation{Class: ClassLive, URL: "u"}, LeaseLive, ""},
		{Observation{Class: ClassStale, Reason: "r"}, LeaseStale, ""},
		{Observation{Class: ClassCorrupt}, LeaseCorrupt, ""},
		{Observation{Class: ClassEmpty}, LeaseEmpty, ""},
		{Observation{Class: ClassAbandoned}, LeaseAbandoned, ""},
		{Observation{Class: ClassSuperseded}, LeaseSuperseded, ""},
		{Observation{Class: ClassBinding}, LeaseBinding, ""},
		{Observation{Class: ClassBusy}, LeaseBusy, ""},
		{Observation{Class: ClassUnusable, Reason: "creating it: denied"}, LeaseUnusable, "creating it: denied"},
		{Observation{Class: "odd"}, LeaseUnusable, `the election returned an unknown class "odd"`},
		{Observation{}, LeaseUnusable, `the election returned an unknown class ""`},
	} {
		got, failure := TriggerFor(tc.obs)
		if got != tc.want || failure != tc.wantFailure {
			t.Errorf("TriggerFor(%+v) = %s, %q; want %s, %q", tc.obs, got, failure, tc.want, tc.wantFailure)
		}
	}
	for _, c := range Classes {
		if tr, _ := TriggerFor(Observation{Class: c}); string(tr) != "lease-"+string(c) {
			t.Errorf("class %s fires %s, want lease-%s", c, tr, c)
		}
	}
}

func TestBusyGrace(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	grace := 10 * time.Second
	since := time.Time{}
	for _, step := range []struct {
		at        time.Duration
		class     Class
		wantSince time.Duration // -1: zero
		wantOver  bool
	}{
		{0, ClassBusy, 0, false},
		{5 * time.Second, ClassBusy, 0, false},
		{6 * time.Second, ClassBinding, -1, false}, // a run is broken by any other class
		{7 * time.Second, ClassBusy, 7 * time.Second, false},
		{16 * time.Second, ClassBusy, 7 * time.Second, false},
		{17 * time.Second, ClassBusy, 7 * time.Second, true},
	} {
		now := t0.Add(step.at)
		since = NextBusySince(since, step.class, now)
		want := time.Time{}
		if step.wantSince >= 0 {
			want = t0.Add(step.wantSince)
		}
		if !since.Equal(want) {
			t.Fatalf("at %s: since = %v, want %v", step.at, since, want)
		}
		if got := GraceElapsed(since, now, grace); got != step.wantOver {
			t.Errorf("at %s: GraceElapsed = %v, want %v", step.at, got, step.wantOver)
		}
	}
}

// A wait ends when its own grace does, or at the election's bound when
// that comes first; the message names the owner and the deadline.
func TestWaitEnd(t *testing.T) {
	t0 := time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC)
	bound := t0.Add(20 * time.Second)
	for _, tc := range []struct {
		name  string
		obs   Observation
		since time.Time
		until time.Time
		msg   string
	}{
		{"binding", Observation{Class: ClassBinding, Owner: 42, Grace: 15 * time.Second}, time.Time{}, t0.Add(15 * time.Second),
			"waiting for the lease's owner (pid 42) to publish its server's URL, until 12:00:15.000; then the lease is taken over"},
		{"binding past the bound", Observation{Class: ClassBinding, Owner: 42, Grace: time.Minute}, time.Time{}, bound,
			"waiting for the lease's owner (pid 42) to publish its server's URL, until 12:00:20.000; then this client is served alone"},
		{"binding, an empty file", Observation{Class: ClassBinding}, time.Time{}, bound,
			"waiting for the process writing the lease to finish it, until 12:00:20.000; then this client is served alone"},
		{"busy", Observation{Class: ClassBusy, Owner: 7}, t0.Add(-2 * time.Second), t0.Add(8 * time.Second),
			"waiting for the server of the lease's owner (pid 7) to answer, until 12:00:08.000; then the lease is taken over"},
	} {
		until, then := waitEnd(tc.obs, t0, tc.since, 10*time.Second, bound, false)
		if !until.Equal(tc.until) {
			t.Errorf("%s: until %v, want %v", tc.name, until, tc.until)
		}
		if got := waitMessage(tc.obs, until.In(time.UTC), then); got != tc.msg {
			t.Errorf("%s:\n got  %q\n want %q", tc.name, got, tc.msg)
		}
	}
	// A headless process (serve) has no client to serve alone: it ends.
	until, then := waitEnd(Observation{Class: ClassBinding}, t0, time.Time{}, 10*time.Second, bound, true)
	want := "waiting for the process writing the lease to finish it, until 12:00:20.000; then this process ends: it has no client to serve alone"
	if got := waitMessage(Observation{Class: ClassBinding}, until.In(time.UTC), then); got != want {
		t.Errorf("headless:\n got  %q\n want %q", got, want)
	}
}

func TestShouldExit(t *testing.T) {
	for _, tc := range []struct {
		left     bool
		sessions int
		want     bool
	}{
		{false, 0, false}, {false, 3, false}, {true, 1, false}, {true, 0, true},
	} {
		if got := shouldExit(tc.left, tc.sessions); got != tc.want {
			t.Errorf("shouldExit(%v, %d) = %v, want %v", tc.left, tc.sessions, got, tc.want)
		}
	}
}

func TestReasons(t *testing.T) {
	if got, want := timeoutReason(20*time.Second, Observation{}), "no election attempt finished within 20s"; got != want {
		t.Errorf("timeoutReason = %q, want %q", got, want)
	}
	got := timeoutReason(20*time.Second, Observation{Class: ClassBusy, Reason: "silent"})
	if want := "no usable lease within 20s (last seen: busy lease: silent)"; got != want {
		t.Errorf("timeoutReason = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		t    Trigger
		want Outcome
	}{
		{ClientLeft, Outcome{Reason: "the client left"}},
		{Signal, Outcome{Reason: "signal SIGTERM", Signal: "SIGTERM"}},
		{SessionsChanged, Outcome{Reason: "the last session ended"}},
		{LeaseLive, Outcome{Reason: "a shared server already runs at http://127.0.0.1:9"}},
		{LeaseUnusable, Outcome{Reason: "cannot run the shared server: read-only", Failure: "read-only"}},
		{ElectionTimedOut, Outcome{Reason: "cannot run the shared server: read-only", Failure: "read-only"}},
		{ServerStartFailed, Outcome{Reason: "cannot run the shared server: read-only", Failure: "read-only"}},
	} {
		if got := endingOf(tc.t, "SIGTERM", "read-only", "http://127.0.0.1:9"); *got != tc.want {
			t.Errorf("endingOf(%s) = %+v, want %+v", tc.t, *got, tc.want)
		}
	}
}

func TestNew_ValidatesTheConfig(t *testing.T) {
	ports := Config{Election: &fakeElection{}, Server: &fakeServer{}, Bridge: &fakeBridge{}, Standalone: &fakeStandalone{}}
	for _, tc := range []struct {
		name  string
		tweak func(*Config)
		want  string // "" for a valid config
	}{
		{"defaults", func(*Config) {}, ""},
		{"no election", func(c *Config) { c.Election = nil }, "Election is nil"},
		{"no server", func(c *Config) { c.Server = nil }, "Server is nil"},
		{"no bridge", func(c *Config) { c.Bridge = nil }, "Bridge is nil"},
		{"no standalone", func(c *Config) { c.Standalone = nil }, "Standalone is nil"},
		{"negative", func(c *Config) { c.StopGrace = -time.Second }, "StopGrace is negative"},
		{"poll too long", func(c *Config) { c.BindingPoll = time.Minute }, "BindingPoll (1m0s) must be less than ElectionBound (20s)"},
		{"grace too long", func(c *Config) { c.BusyGrace = 20 * time.Second }, "BusyGrace (20s) must be less than ElectionBound (20s)"},
		{"short bound", func(c *Config) { c.ElectionBound = time.Second; c.BusyGrace = time.Millisecond }, ""},
		{"bound within the default poll", func(c *Config) { c.ElectionBound = DefaultBindingPoll; c.BusyGrace = time.Millisecond }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ports
			tc.tweak(&cfg)
			m, err := New(cfg)
			if tc.want == "" {
				if err != nil || m == nil {
					t.Fatalf("New = %v, %v; want a machine", m, err)
				}
				if m.State() != Electing || m.log == nil || m.cfg.StopGrace != DefaultStopGrace {
					t.Errorf("state %s, logger %v, StopGrace %s: defaults not applied", m.State(), m.log, m.cfg.StopGrace)
				}
				return
			}
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New error = %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
}
