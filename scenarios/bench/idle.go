package main

import (
	"fmt"
	"os"
	"time"
)

// B11 (issue 33, point 6): what sharing costs while nobody speaks. A
// leaseholder and two bridges of one checkout sit idle (initialized,
// their event streams open, one call made each) for idleWindow. A
// process's wake-ups are its threads' voluntary context switches over
// that time, each one a sleep that something ended, summed from
// /proc/<pid>/task/*/status. The window opens once their start-up work
// is done (settle) and lasts longer than every period an idle process
// keeps: six heartbeats, the session and connection timeouts (a timer
// stopped early still wakes the process at the time it was set for) and
// the lease's fallback reread. A `--standalone` client idles beside them
// as the baseline.

// settle is how long the processes are left before the window opens: their
// start's work (the bridges' streams, the first collection) is not idle.
const settle = 2 * time.Second

// idleWindow is how long the processes are watched: past the keep-alive of
// a connection (2 minutes), the longest timeout a request arms.
const idleWindow = 130 * time.Second

func (b *bench) b11() ([]Figure, error) {
	lh, err := b.newLeaseholder("B11", 0)
	if err != nil {
		return nil, err
	}
	defer lh.c.close()
	procs := []*pipeClient{lh.c}
	for _, name := range []string{"codex", "gemini-cli"} {
		c, err := b.idleBridge(lh.dir, name)
		if err != nil {
			return nil, fmt.Errorf("B11: %w", err)
		}
		defer c.close()
		procs = append(procs, c)
	}
	alone, err := b.spawn(lh.dir, "--standalone")
	if err == nil {
		defer alone.close()
		ctx, cancel := step()
		err = initialize(ctx, alone, "claude-code")
		cancel()
	}
	if err == nil {
		err = repository(alone)
	}
	if err != nil {
		return nil, fmt.Errorf("B11 standalone: %w", err)
	}
	procs = append(procs, alone)
	time.Sleep(settle) // not a wait for an event: what it lets pass is the point
	before := make([]int, len(procs))
	for i, c := range procs {
		if before[i], err = wakeups(c.pid()); err != nil {
			return nil, err
		}
	}
	time.Sleep(idleWindow) // the measure's window, not a wait for an event
	leaseholder, bridges, standalone := newSeries("/s"), newSeries("/s"), newSeries("/s")
	for i, c := range procs {
		after, err := wakeups(c.pid())
		if err != nil {
			return nil, err
		}
		rate := float64(after-before[i]) / idleWindow.Seconds()
		switch i {
		case 0:
			leaseholder.add(rate)
		case len(procs) - 1:
			standalone.add(rate)
		default:
			bridges.add(rate)
		}
	}
	const goal = "≤ 3 wake-ups/s"
	return []Figure{
		absolute("B11", "idle leaseholder serving two idle bridges: wake-ups", "max", leaseholder, "--standalone, idle", standalone, 3, goal),
		absolute("B11", "idle bridge: wake-ups", "max", bridges, "--standalone, idle", standalone, 3, goal),
	}, nil
}

// wakeups is how many times the threads of pid have slept and been woken
// so far: their voluntary context switches.
func wakeups(pid int) (int, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tasks {
		v, err := procFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()), "voluntary_ctxt_switches")
		if err == nil { // else the thread ended meanwhile (the Go runtime rarely ends one)
			n += int(v)
		}
	}
	return n, nil
}
