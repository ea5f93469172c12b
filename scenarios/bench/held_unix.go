//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// B10 (issue 33, point 2): no answer waits on an election it does not
// need. New clients start, one after another, while the checkout's owner
// cannot take them: full (its session cap reached: 503), frozen (SIGSTOP:
// the probe fails while the owner lives, which the election judges busy)
// and binding (a lease without a URL whose owner lives). Each start is
// timed from spawn to initialize answered; then each list (tools,
// resources, prompts) and one layer read (majordomus_list) from request
// to answer. Nobody needs the board, so nobody may wait for the election.

// heldGoal is the bound on each of those answers, at the median.
const heldGoal = 150 * time.Millisecond

func (b *bench) b10(starts int) ([]Figure, error) {
	lh, err := b.newLeaseholder("B10", 0)
	if err != nil {
		return nil, err
	}
	defer lh.c.close()
	var figs []Figure
	d := newDirectClient(lh.url, lh.authorization)
	d.hc.Timeout = 5 * time.Second
	sessions, full := floodToCap(context.Background(), d)
	if !full {
		d.endAll(sessions)
		return nil, fmt.Errorf("B10: the server took %d sessions and never said it was full", len(sessions))
	}
	f, err := b.heldStarts("full (its session cap reached: 503)", lh.dir, starts, "is full")
	d.endAll(sessions)
	if err != nil {
		return nil, err
	}
	figs = append(figs, f)

	if err := lh.c.proc.Signal(syscall.SIGSTOP); err != nil {
		return nil, err
	}
	defer lh.c.proc.Signal(syscall.SIGCONT) // it finds its lease lost, and ends with its client
	if f, err = b.heldStarts("frozen (SIGSTOP: judged busy)", lh.dir, starts); err != nil {
		return nil, err
	}
	figs = append(figs, f)

	if err := bindingLease(filepath.Join(lh.dir, ".ai/local/state/mcp/server.json")); err != nil {
		return nil, fmt.Errorf("B10: %w", err)
	}
	if f, err = b.heldStarts("binding (a lease without a URL, its owner alive)", lh.dir, starts); err != nil {
		return nil, err
	}
	return append(figs, f), nil
}

// heldStarts times starts new clients of dir, one at a time, under an
// owner in the state named owner; check, when set, is a log line each
// start must write (the path it took).
func (b *bench) heldStarts(owner, dir string, starts int, check ...string) (Figure, error) {
	init, lists, reads := newSeries("ms"), newSeries("ms"), newSeries("ms")
	for range starts {
		if err := b.heldStart(dir, init, lists, reads, check); err != nil {
			return Figure{}, fmt.Errorf("B10 under a %s owner: %w", owner, err)
		}
	}
	f := Figure{ID: "B10", Measure: "owner " + owner + ": a new client's spawn → initialize answered", Stat: "p50",
		Value: init.summary(), Goal: fmt.Sprintf("≤ %d ms at p50, as each list and a layer read", heldGoal.Milliseconds())}
	l, r := lists.summary(), reads.summary()
	f.Note = fmt.Sprintf("%d starts; tools, resources and prompts lists: p50 %s ms, max %s ms; majordomus_list: p50 %s ms, max %s ms",
		starts, num(l.Median), num(l.Max), num(r.Median), num(r.Max))
	goal := ms(heldGoal)
	f.Result = verdict(f.Value.Median <= goal && l.Median <= goal && r.Median <= goal)
	return f, nil
}

// heldStart is one start of heldStarts.
func (b *bench) heldStart(dir string, init, lists, reads *series, check []string) error {
	start := time.Now()
	c, err := b.spawn(dir)
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := step()
	defer cancel()
	if err := handshake(ctx, c, "bench-held"); err != nil {
		return err
	}
	init.addDur(time.Since(start))
	for _, list := range []string{"tools/list", "resources/list", "prompts/list"} {
		began := time.Now()
		if _, err := c.call(ctx, list, map[string]any{}); err != nil {
			return err
		}
		lists.addDur(time.Since(began))
	}
	began := time.Now()
	if err := callTool(ctx, c, "majordomus_list", nil, nil); err != nil {
		return err
	}
	reads.addDur(time.Since(began))
	if len(check) > 0 {
		_, err = c.waitLog(ctx, check...)
	}
	return err
}

// bindingLease rewrites the lease at path as its owner leaves it while it
// binds: no URL yet, started now (a binding lease's age counts from its
// started_at), the same live owner.
func bindingLease(path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("the lease: %w", err)
	}
	doc["url"], doc["started_at"] = nil, time.Now().UTC().Format(time.RFC3339Nano)
	if raw, err = json.Marshal(doc); err != nil {
		return err
	}
	tmp := path + ".bench"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
