package node

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/layer"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/registry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/bridge"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

// Timings are the durations a process runs by: the defaults, then the
// manifest's server section, then the flags (for tests). Every package
// that needs one is given it from here, resolved once: the idle timeout
// the HTTP server ends sessions at is the one the board lets silent peers
// go at and the one a bridge bounds its goodbyes by.
type Timings struct {
	BindGrace, ProbeTimeout, ElectionBound, BusyGrace, IdleTimeout, Heartbeat time.Duration
	// JoinRetry is how long a client served alone first waits to try to
	// share again (a flag only, for tests).
	JoinRetry time.Duration
}

// ErrTimings is wrapped by the error of timings that cannot work together.
var ErrTimings = errors.New("the timings do not work together")

// TimingsError says every conflict of a set of timings, naming each
// duration as the user set it: a flag, a key of the manifest, or the
// default.
type TimingsError struct {
	Conflicts []string
	// Flagged says a flag set one of the durations in conflict: the
	// command line is wrong, not (only) the checkout's manifest.
	Flagged bool
}

func (e *TimingsError) Error() string { return strings.Join(e.Conflicts, "; ") }
func (e *TimingsError) Unwrap() error { return ErrTimings }

// ResolveTimings picks, for each duration, the flag's, else the
// manifest's, else the default its owner package declares, and checks the
// result as a whole: a *TimingsError names every conflict.
func ResolveTimings(m layer.Timings, flags Timings) (Timings, error) {
	t := resolve(m, flags)
	return t.values(), t.check()
}

// timing is one resolved duration and where it came from.
type timing struct {
	flag, key string // its flag and its manifest key
	d         time.Duration
	from      source
}

type source int

const (
	byDefault source = iota
	byManifest
	byFlag
)

func (t timing) String() string {
	switch t.from {
	case byFlag:
		return t.flag + " " + short(t.d)
	case byManifest:
		return fmt.Sprintf("the manifest's server.%s (%s)", t.key, short(t.d))
	}
	return t.flag + " " + short(t.d) + " (the default)"
}

// short writes d as a person would: 90s, 2m, 1h, 300ms.
func short(d time.Duration) string {
	switch {
	case d != 0 && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d != 0 && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d != 0 && d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

type resolved struct {
	bindGrace, probeTimeout, electionBound, busyGrace, idleTimeout, heartbeat, joinRetry timing
}

func resolve(m layer.Timings, flags Timings) resolved {
	pick := func(flag, key string, def, manifest, given time.Duration) timing {
		switch {
		case given != 0: // a negative flag is kept, to be refused
			return timing{flag, key, given, byFlag}
		case manifest > 0:
			return timing{flag, key, manifest, byManifest}
		}
		return timing{flag, key, def, byDefault}
	}
	return resolved{
		bindGrace:     pick("--bind-grace", "bind_grace_seconds", registry.DefaultBindGrace, m.BindGrace, flags.BindGrace),
		probeTimeout:  pick("--probe-timeout", "probe_timeout_seconds", registry.DefaultProbeTimeout, m.ProbeTimeout, flags.ProbeTimeout),
		electionBound: pick("--election-bound", "election_bound_seconds", machine.DefaultElectionBound, m.ElectionBound, flags.ElectionBound),
		busyGrace:     pick("--busy-grace", "busy_grace_seconds", machine.DefaultBusyGrace, m.BusyGrace, flags.BusyGrace),
		idleTimeout:   pick("--idle-timeout", "session_idle_timeout_seconds", wire.DefaultIdleTimeout, m.SessionIdleTimeout, flags.IdleTimeout),
		heartbeat:     pick("--heartbeat", "bridge_heartbeat_seconds", bridge.DefaultHeartbeat, m.BridgeHeartbeat, flags.Heartbeat),
		joinRetry:     pick("--join-retry", "", machine.DefaultJoinRetry, 0, flags.JoinRetry),
	}
}

func (r resolved) values() Timings {
	return Timings{
		BindGrace: r.bindGrace.d, ProbeTimeout: r.probeTimeout.d, ElectionBound: r.electionBound.d,
		BusyGrace: r.busyGrace.d, IdleTimeout: r.idleTimeout.d, Heartbeat: r.heartbeat.d, JoinRetry: r.joinRetry.d,
	}
}

// shorter is one relation the timings must keep: a shorter than b, for
// the reason given.
type shorter struct {
	a, b timing
	why  string
}

// check reports every duration that is not positive and every relation
// that does not hold, in one error; nil when they all work together.
func (r resolved) check() error {
	e := &TimingsError{}
	for _, t := range []timing{r.bindGrace, r.probeTimeout, r.electionBound, r.busyGrace, r.idleTimeout, r.heartbeat, r.joinRetry} {
		if t.d <= 0 {
			e.Conflicts = append(e.Conflicts, t.String()+" is not a positive duration")
			e.Flagged = e.Flagged || t.from == byFlag
		}
	}
	if len(e.Conflicts) > 0 {
		return e
	}
	for _, rel := range []shorter{
		{r.heartbeat, r.idleTimeout, "an idle bridge's session would expire between beats"},
		{r.probeTimeout, r.busyGrace, "a server would be given up for silent before one probe of it could time out"},
		{r.busyGrace, r.electionBound, "the election would give up before a busy lease is taken over"},
	} {
		if rel.a.d >= rel.b.d {
			e.Conflicts = append(e.Conflicts, fmt.Sprintf("%s is not shorter than %s: %s", rel.a, rel.b, rel.why))
			e.Flagged = e.Flagged || rel.a.from == byFlag || rel.b.from == byFlag
		}
	}
	if len(e.Conflicts) > 0 {
		return e
	}
	return nil
}
