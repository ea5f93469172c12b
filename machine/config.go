package machine

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// Default durations (docs/design.md#the-lease).
const (
	DefaultElectionBound = 20 * time.Second
	DefaultBindingPoll   = 100 * time.Millisecond
	DefaultBusyGrace     = 10 * time.Second
	DefaultStopGrace     = 5 * time.Second
	DefaultJoinRetry     = time.Second
	DefaultJoinRetryMax  = 8 * time.Second
)

// ErrConfig is returned by [New] for a Config it cannot run with.
var ErrConfig = errors.New("machine: invalid config")

// ErrContended is what [Election.TakeOver] returns when another process
// held the take-over's critical section too long to wait for: it is
// deciding the same lease, so the machine looks again rather than serve
// alone.
var ErrContended = errors.New("machine: another process is taking the lease over")

// Config holds what a [Machine] needs. Zero durations take their defaults.
type Config struct {
	// Election reads, judges and replaces the lease. Required.
	Election Election
	// Server is the shared server run as leaseholder. Required.
	Server Server
	// Bridge attaches to another process's server. Required.
	Bridge Bridge
	// Standalone serves the client without sharing. Required.
	Standalone Standalone

	// Headless says the process has no stdio client of its own (`serve`):
	// it runs the shared server for others, or exits where a process with
	// a client would attach or serve alone.
	Headless bool

	// LeasePath is the lease file's path, named in log lines.
	LeasePath string

	// ElectionBound limits a whole election, however many attempts it
	// takes; when it elapses the client is served alone. Default 20s.
	ElectionBound time.Duration
	// BindingPoll is how long a waiting election waits for a change of the
	// lease file before it reads the lease again anyway. Default 100ms, or
	// half of ElectionBound when that is shorter. Must be less than
	// ElectionBound.
	BindingPoll time.Duration
	// BusyGrace is how long a busy lease (its URL silent, its owner alive) is
	// waited for, counted from the first busy observation of an unbroken run,
	// before it is taken over. Default 10s. Must be less than ElectionBound.
	BusyGrace time.Duration
	// StopGrace bounds [Server.Stop]. Default 5s.
	StopGrace time.Duration
	// JoinRetry is how long a process served alone waits before it tries
	// to share again, and the least time between two of its tries, however
	// often the lease changes: alone is never a spin. Default 1s.
	JoinRetry time.Duration
	// JoinRetryMax bounds the wait, which doubles after each try that
	// finds no way to share and starts again from JoinRetry when the lease
	// changes. Default 8s; at least JoinRetry.
	JoinRetryMax time.Duration

	// Logger receives the machine's log lines. Nil means zap.NewNop().
	Logger *zap.Logger
	// OnTransition, when set, is called on the loop goroutine for every
	// change of state, between the old state's exit actions and the new
	// one's entry actions. It must return quickly; it may call the
	// Machine's input methods.
	OnTransition func(Transition)
}

// withDefaults returns cfg with every zero field given its default.
func (cfg Config) withDefaults() Config {
	cfg.ElectionBound = cmp.Or(cfg.ElectionBound, DefaultElectionBound)
	// A short bound the user chose is no reason to refuse the default poll;
	// half the bound still reads the lease again before the bound ends.
	cfg.BindingPoll = cmp.Or(cfg.BindingPoll, min(DefaultBindingPoll, cfg.ElectionBound/2))
	cfg.BusyGrace = cmp.Or(cfg.BusyGrace, DefaultBusyGrace)
	cfg.StopGrace = cmp.Or(cfg.StopGrace, DefaultStopGrace)
	cfg.JoinRetry = cmp.Or(cfg.JoinRetry, DefaultJoinRetry)
	cfg.JoinRetryMax = cmp.Or(cfg.JoinRetryMax, max(DefaultJoinRetryMax, cfg.JoinRetry))
	cfg.Logger = cmp.Or(cfg.Logger, zap.NewNop())
	return cfg
}

// validate reports the first problem of a Config that has its defaults.
func (cfg Config) validate() error {
	switch {
	case cfg.Election == nil:
		return fmt.Errorf("%w: Election is nil", ErrConfig)
	case cfg.Server == nil:
		return fmt.Errorf("%w: Server is nil", ErrConfig)
	case cfg.Bridge == nil:
		return fmt.Errorf("%w: Bridge is nil", ErrConfig)
	case cfg.Standalone == nil:
		return fmt.Errorf("%w: Standalone is nil", ErrConfig)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"ElectionBound", cfg.ElectionBound},
		{"BindingPoll", cfg.BindingPoll},
		{"BusyGrace", cfg.BusyGrace},
		{"StopGrace", cfg.StopGrace},
		{"JoinRetry", cfg.JoinRetry},
		{"JoinRetryMax", cfg.JoinRetryMax},
	} {
		if d.d < 0 {
			return fmt.Errorf("%w: %s is negative (%s)", ErrConfig, d.name, d.d)
		}
	}
	if cfg.BindingPoll >= cfg.ElectionBound {
		return fmt.Errorf("%w: BindingPoll (%s) must be less than ElectionBound (%s)", ErrConfig, cfg.BindingPoll, cfg.ElectionBound)
	}
	if cfg.BusyGrace >= cfg.ElectionBound {
		return fmt.Errorf("%w: BusyGrace (%s) must be less than ElectionBound (%s), or a busy lease is never taken over", ErrConfig, cfg.BusyGrace, cfg.ElectionBound)
	}
	if cfg.JoinRetryMax < cfg.JoinRetry {
		return fmt.Errorf("%w: JoinRetryMax (%s) must be at least JoinRetry (%s)", ErrConfig, cfg.JoinRetryMax, cfg.JoinRetry)
	}
	return nil
}
