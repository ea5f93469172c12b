package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// spawnInitialize times one client: spawn → initialize answered
// (notifications/initialized sent). check, when set, is a log line waited
// for after the timing (to prove the client took the expected path).
func (b *bench) spawnInitialize(dir string, args []string, check ...string) (time.Duration, error) {
	start := time.Now()
	c, err := b.spawn(dir, args...)
	if err != nil {
		return 0, err
	}
	defer c.close()
	ctx, cancel := step()
	defer cancel()
	if err := handshake(ctx, c, "bench"); err != nil {
		return 0, err
	}
	took := time.Since(start)
	if len(check) > 0 {
		_, err = c.waitLog(ctx, check...)
	}
	return took, err
}

// leaseProc is a leaseholder and its server's URL.
type leaseProc struct {
	c             *pipeClient
	dir           string // the checkout it serves
	url           string
	authorization string // what a direct HTTP client sends (docs/security.md)
}

// newLeaseholder starts the first client of a new checkout holding objects
// generated objects (as B7 writes them), initializes it and waits until it
// serves; what names it in an error.
func (b *bench) newLeaseholder(what string, objects int) (*leaseProc, error) {
	dir, err := b.checkout()
	if err != nil {
		return nil, err
	}
	if err := writeObjects(dir, objects); err != nil {
		return nil, fmt.Errorf("%s writing %d objects: %w", what, objects, err)
	}
	lh := &leaseProc{dir: dir}
	if lh.c, err = b.spawn(dir); err != nil {
		return nil, err
	}
	ctx, cancel := step()
	defer cancel()
	err = handshake(ctx, lh.c, "leaseholder")
	var line string
	if err == nil {
		line, err = lh.c.waitLog(ctx, "shared server listening on")
	}
	if err == nil {
		lh.url, err = logField[string](line, "url")
	}
	if err == nil {
		lh.authorization, err = b.authorization(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s leaseholder: %w", what, err)
	}
	lh.c.drain() // it is never called: what it is told is read and dropped
	return lh, nil
}

// authorization is the Authorization header's value that lets a direct
// HTTP client into dir's server, from `majordomus-mcp status`, as a user
// finds it.
func (b *bench) authorization(dir string) (string, error) {
	cmd := exec.Command(b.bin, "status")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("status: %w", err)
	}
	var report struct{ Connect *struct{ Header string } }
	if err := json.Unmarshal(out, &report); err != nil || report.Connect == nil {
		return "", fmt.Errorf("status says no way to connect: %s", out)
	}
	value, ok := strings.CutPrefix(report.Connect.Header, "Authorization: ")
	if !ok {
		return "", fmt.Errorf("status shows the header %q", report.Connect.Header)
	}
	return value, nil
}

// B1: a second client attaching vs a --standalone client, alternating in
// the same checkout while one leaseholder serves it.
func (b *bench) b1() ([]Figure, error) {
	lh, err := b.newLeaseholder("B1", 0)
	if err != nil {
		return nil, err
	}
	defer lh.c.close()
	// What B1 tells apart is a few per cent of a start that varies by a
	// fifth from one spawn to the next: with 40 runs of each its ratio
	// moved by up to 0.1 between runs, so it takes three times as many.
	attach, alone, err := b.attachOrAlone(lh.dir, 3*b.runs)
	if err != nil {
		return nil, err
	}
	figs := []Figure{compare("B1", "attach: second client spawn → initialize answered", "p50",
		attach, "--standalone spawn → initialize answered", alone, 1.0, "≤ 1.0× at p50; p99 ≤ 2× p50")}
	a := figs[0].Value // issue 33: an attach's p99 is at most twice its median
	figs[0].Note = fmt.Sprintf("%.3f× exactly; attach p99 %s ms = %.2f× its p50 (%d alternating runs of each)",
		a.Median/figs[0].Base.Median, num(a.P99), a.P99/a.Median, a.N)
	if a.P99 > 2*a.Median && figs[0].Result == "met" {
		figs[0].Result = "missed"
	}

	// The same where the layer is not a toy: a client served alone builds
	// the index, an attaching one does not.
	const objects = 1000
	lhBig, err := b.newLeaseholder("B1", objects)
	if err != nil {
		return nil, err
	}
	defer lhBig.c.close()
	attachBig, aloneBig, err := b.attachOrAlone(lhBig.dir, b.runs)
	if err != nil {
		return nil, err
	}
	diag := compare("B1", fmt.Sprintf("diagnostic: the same in a checkout of %s objects", thousands(objects)), "p50",
		attachBig, "--standalone spawn → initialize answered", aloneBig, 1e9, "—")
	diag.Result = "info"
	return append(figs, diag), nil
}

// attachOrAlone times, alternating, runs of a second client attaching to
// dir's running leaseholder and of a --standalone client in dir.
func (b *bench) attachOrAlone(dir string, runs int) (attach, alone *series, err error) {
	attach, alone = newSeries("ms"), newSeries("ms")
	for i := range b.warm + runs {
		a, err := b.spawnInitialize(dir, nil, "bridging this stdio session")
		if err != nil {
			return nil, nil, fmt.Errorf("B1 attach: %w", err)
		}
		s, err := b.spawnInitialize(dir, []string{"--standalone"})
		if err != nil {
			return nil, nil, fmt.Errorf("B1 standalone: %w", err)
		}
		if i >= b.warm {
			attach.addDur(a)
			alone.addDur(s)
		}
	}
	return attach, alone, nil
}

// B4: the leaseholder is killed -9 while a bridge is idle (initialized, one
// call done, its event stream open); the figure is kill → the bridge's next
// call answered. The call is sent as soon as the kernel has reaped the
// leaseholder, which waits for its inotify instance's teardown (README),
// and, alternating with that, at the signal, as a call under way when the
// leaseholder dies is: the bridge takes over while the kernel still tears
// the dead process down. Each run uses a fresh checkout.
func (b *bench) b4() ([]Figure, error) {
	reaped, atSignal := newSeries("ms"), newSeries("ms")
	alone, reap := newSeries("ms"), newSeries("ms")
	var slowest time.Duration
	var slowestLog []string // the bridge's log of the take-over that sets p99
	for i := range b.warm + b.runs {
		t, r, log, err := b.takeOverOnce(false)
		if err != nil {
			return nil, fmt.Errorf("B4 take-over: %w", err)
		}
		at, _, _, err := b.takeOverOnce(true)
		if err != nil {
			return nil, fmt.Errorf("B4 take-over, the call sent at the signal: %w", err)
		}
		dir, err := b.checkout()
		if err != nil {
			return nil, err
		}
		s, err := b.spawnInitialize(dir, []string{"--standalone"})
		if err != nil {
			return nil, fmt.Errorf("B4 standalone: %w", err)
		}
		if i >= b.warm {
			if t > slowest {
				slowest, slowestLog = t, log
			}
			reaped.addDur(t)
			atSignal.addDur(at)
			reap.addDur(r)
			alone.addDur(s)
		}
	}
	f := compare("B4", "take-over: leaseholder killed -9 → idle bridge's next call answered", "p99",
		reaped, "--standalone spawn → initialize answered", alone, 2.0, "≤ 2× at p99")
	rs := reap.summary()
	f.Note = fmt.Sprintf("includes kill → reaped (median %.2f ms) before the call is sent", rs.Median)
	f.Extra = map[string]any{"kill_to_reaped": rs, "slowest_bridge_log": slowestLog}
	g := compare("B4", "the same, the call sent at the signal (under way as the leaseholder dies)", "p99",
		atSignal, "--standalone spawn → initialize answered", alone, 2.0, "≤ 2× at p99")
	return []Figure{f, g}, nil
}

// takeOverOnce is one take-over, and the bridge's log from the kill on
// (debug level): a slow one says where it waited. The call is sent at the
// signal, or once the leaseholder is reaped.
func (b *bench) takeOverOnce(atSignal bool) (took, reaped time.Duration, log []string, err error) {
	lh, err := b.newLeaseholder("B4", 0)
	if err != nil {
		return 0, 0, nil, err
	}
	defer lh.c.close()
	br, err := b.idleBridge(lh.dir, "bridge")
	if err != nil {
		return 0, 0, nil, err
	}
	defer br.close()
	before := len(br.proc.Logs())
	start := time.Now()
	if err := lh.c.proc.Signal(syscall.SIGKILL); err != nil {
		return 0, 0, nil, err
	}
	if atSignal {
		err = repository(br)
		took = time.Since(start)
	}
	if err != nil {
		return 0, 0, nil, err
	}
	if !lh.c.waitExit(stepTimeout) {
		return 0, 0, nil, fmt.Errorf("the leaseholder was not reaped within %s of kill -9", stepTimeout)
	}
	reaped = time.Since(start)
	if !atSignal {
		if err := repository(br); err != nil {
			return 0, 0, nil, err
		}
		took = time.Since(start)
	}
	ctx, cancel := step()
	defer cancel()
	if _, err := br.waitLog(ctx, "took over as the shared server"); err != nil {
		return 0, 0, nil, fmt.Errorf("the bridge answered but did not say it took over: %w", err)
	}
	return took, reaped, br.proc.Logs()[before:], nil
}

// idleBridge attaches a bridge to dir's leaseholder and leaves it idle:
// initialized, its event stream open (--log-level debug says so) and one
// call made.
func (b *bench) idleBridge(dir, client string) (*pipeClient, error) {
	c, err := b.spawn(dir, "--log-level", "debug")
	if err != nil {
		return nil, err
	}
	ctx, cancel := step()
	defer cancel()
	err = handshake(ctx, c, client)
	if err == nil {
		_, err = c.waitLog(ctx, "stream open")
	}
	if err == nil {
		err = repository(c)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}
