//go:build unix

package main

import (
	"fmt"
	"path/filepath"
	"syscall"
	"time"
)

// The default timings (docs/design.md#the-lease) B9 runs with: the bench
// measures the built binary, never imports its packages.
const heartbeat, busyGrace, electionBound = 20 * time.Second, 10 * time.Second, 20 * time.Second

// B9: with default timings, the leaseholder is frozen (SIGSTOP) just after
// two bridges attached and made a call, so their heartbeats come nearly a
// whole heartbeat later; nobody speaks. The figures are freeze → the lease
// names another server, and then each client's first call → its answer.
// Each run takes about a heartbeat and a busy grace.
func (b *bench) b9(runs int) ([]Figure, error) {
	replaced, calls := newSeries("ms"), newSeries("ms")
	for range runs {
		if err := b.freezeOnce(replaced, calls); err != nil {
			return nil, fmt.Errorf("B9: %w", err)
		}
	}
	bound := busyGrace + heartbeat
	f := Figure{ID: "B9", Measure: "leaseholder frozen (SIGSTOP), two bridges idle → the lease names a serving leaseholder",
		Stat: "max", Value: replaced.summary(), Goal: fmt.Sprintf("≤ busy grace + heartbeat (%s)", bound)}
	c := Figure{ID: "B9", Measure: "then each client's first call → answered", Stat: "max", Value: calls.summary(), Goal: "< 1 s"}
	f.Result, c.Result = verdict(f.Value.Max <= ms(bound)), verdict(c.Value.Max < 1000)
	return []Figure{f, c}, nil
}

func (b *bench) freezeOnce(replaced, calls *series) error {
	lh, err := b.newLeaseholder("B9", 0)
	if err != nil {
		return err
	}
	defer lh.c.close()
	var bridges []*pipeClient
	for _, name := range []string{"codex", "gemini-cli"} {
		c, err := b.idleBridge(lh.dir, name)
		if err != nil {
			return err
		}
		defer c.close()
		bridges = append(bridges, c)
	}
	start := time.Now()
	if err := lh.c.proc.Signal(syscall.SIGSTOP); err != nil {
		return err
	}
	defer lh.c.proc.Signal(syscall.SIGCONT) // it finds its lease lost, and ends with its client
	lease := filepath.Join(lh.dir, ".ai/local/state/mcp/server.json")
	deadline := start.Add(busyGrace + heartbeat + electionBound)
	for url := leaseURL(lease); url == "" || url == lh.url; url = leaseURL(lease) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the lease still names the frozen server %s after %s", lh.url, time.Since(start).Round(time.Millisecond))
		}
		time.Sleep(5 * time.Millisecond)
	}
	replaced.addDur(time.Since(start))
	for i := range bridges { // the later heartbeat first: that bridge may still be on the frozen server
		began := time.Now()
		if err := repository(bridges[len(bridges)-1-i]); err != nil {
			return err
		}
		calls.addDur(time.Since(began))
	}
	return nil
}
