package main

import (
	"encoding/json"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"
)

// stormRun is what one storm showed.
type stormRun struct {
	perClient    []time.Duration // release → this client's initialize answered
	all          time.Duration   // release → every initialize answered
	leaseholders int             // "shared server listening on" lines, all clients
	attached     int             // clients that said they bridge
	alone        int             // clients served alone
	boardCount   int             // majordomus_peers count seen by one client
	cpu          time.Duration   // user+system CPU of all the clients, after one call each
	warnings     map[string]int  // warn and error log lines, by message
}

// B5: storm clients spawned at once in a fresh checkout; each sends
// initialize at once. One client alone in a fresh checkout is the
// baseline. The leaseholder serving the storm gives B6 its figure.
func (b *bench) b5() ([]Figure, error) {
	perClient, all, single, cpu := newSeries("ms"), newSeries("ms"), newSeries("ms"), newSeries("ms")
	leaders := map[int]int{}
	warnings := map[string]int{}
	var problems []string
	for i := range b.warm + b.runs {
		r, err := b.stormOnce(i >= b.warm)
		if err != nil {
			return nil, fmt.Errorf("B5 storm %d: %w", i, err)
		}
		dir, err := b.checkout()
		if err != nil {
			return nil, err
		}
		one, err := b.spawnInitialize(dir, nil, "shared server listening on")
		if err != nil {
			return nil, fmt.Errorf("B5 single client: %w", err)
		}
		// Every storm is judged, the warm-up's too: a warm-up spares
		// timings, not correctness (README: "every storm").
		if r.leaseholders != 1 || r.attached != b.storm-1 || r.alone != 0 || r.boardCount != b.storm {
			problems = append(problems, fmt.Sprintf("run %d%s: %d leaseholder(s), %d attached, %d alone, board count %d",
				i-b.warm, map[bool]string{true: " (warm-up)"}[i < b.warm], r.leaseholders, r.attached, r.alone, r.boardCount))
		}
		if i < b.warm {
			continue
		}
		single.addDur(one)
		all.addDur(r.all)
		cpu.addDur(r.cpu)
		for w, n := range r.warnings {
			warnings[w] += n
		}
		for _, d := range r.perClient {
			perClient.addDur(d)
		}
		leaders[r.leaseholders]++
	}
	f := compare("B5", fmt.Sprintf("storm: %d clients released at once → each initialize answered", b.storm), "p99",
		perClient, "one client alone", single, 1e9, "exactly one leaseholder; p99 reported")
	f.Result = verdict(len(problems) == 0)
	f.Note = fmt.Sprintf("leaseholders per run %v (count → runs); all %d answered: median %.0f ms, max %.0f ms; "+
		"the %d processes used %.0f ms of CPU per storm (median), on %d cores; warn/error log lines: %v",
		leaders, b.storm, all.summary().Median, all.summary().Max, b.storm, cpu.summary().Median, runtime.NumCPU(), warnings)
	if len(problems) > 0 {
		f.Note += "; " + fmt.Sprint(problems)
	}
	f.Extra = map[string]any{"all_answered": all.summary(), "leaseholders_per_run": leaders,
		"storm_cpu": cpu.summary(), "warnings": warnings}
	return []Figure{f}, nil
}

// stormOnce releases the storm in a fresh checkout. When record is set,
// the leaseholder's and the bridges' peak RSS go to B6, after every client
// has made one call.
func (b *bench) stormOnce(record bool) (stormRun, error) {
	var r stormRun
	dir, err := b.checkout()
	if err != nil {
		return r, err
	}
	procs := make([]*pipeClient, b.storm)
	times := make([]time.Duration, b.storm)
	errs := make([]error, b.storm)
	release := make(chan struct{})
	var ready, done sync.WaitGroup
	var start time.Time
	for i := range procs {
		ready.Add(1)
		done.Go(func() {
			ready.Done()
			<-release
			if procs[i], errs[i] = b.spawn(dir); errs[i] != nil {
				return
			}
			ctx, cancel := step()
			defer cancel()
			if errs[i] = handshake(ctx, procs[i], fmt.Sprintf("storm-%02d", i)); errs[i] == nil {
				times[i] = time.Since(start)
			}
		})
	}
	ready.Wait()
	start = time.Now()
	close(release)
	done.Wait()
	r.all = time.Since(start)
	defer func() { // every client leaves at once, as the storm came
		var left sync.WaitGroup
		for _, p := range procs {
			if p != nil {
				left.Go(p.close)
			}
		}
		left.Wait()
	}()
	for i, err := range errs {
		if err != nil {
			return r, fmt.Errorf("client %d: %w", i, err)
		}
	}
	r.perClient = times
	for _, p := range procs {
		if err := repository(p); err != nil {
			return r, err
		}
	}
	leader := r.tally(procs)
	if !record {
		return r, nil
	}
	for i, p := range procs {
		if i == leader {
			_ = memOf(p.pid(), b.mem.leaseholder, nil)
		} else {
			_ = memOf(p.pid(), b.mem.bridge, b.mem.bridgePSS)
		}
	}
	return r, b.standaloneRSS(dir, 1)
}

// tally reads what the storm's clients said and spent, once each has made
// a call, and returns the index of the leaseholder (-1 if none).
func (r *stormRun) tally(procs []*pipeClient) int {
	r.warnings = map[string]int{}
	leader := -1
	for i, p := range procs {
		if cpu, err := cpuTime(p.pid()); err == nil {
			r.cpu += cpu
		}
		for _, line := range p.proc.Logs() {
			var entry struct{ Level, Msg string }
			if json.Unmarshal([]byte(line), &entry) == nil && (entry.Level == "warn" || entry.Level == "error") {
				r.warnings[entry.Level+": "+entry.Msg[:min(len(entry.Msg), 90)]]++
			}
		}
		n := p.proc.CountLogs("shared server listening on")
		r.leaseholders += n
		if n > 0 {
			leader = i
		}
		r.attached += p.proc.CountLogs("bridging this stdio session")
		r.alone += p.proc.CountLogs("serving this client alone")
	}
	r.boardCount = -1
	if leader >= 0 {
		if board, err := boardOf(procs[leader]); err == nil {
			r.boardCount = board.Count
		}
	}
	return leader
}

// board is what majordomus_peers shows: how many peers, and each one.
type board struct {
	Count int         `json:"count"`
	Peers []boardPeer `json:"peers"`
}

// boardPeer is one peer of a board: whether it is attached, and the peer
// as the tool gave it (for a report to name a peer it did not expect).
type boardPeer struct {
	Attached bool
	raw      json.RawMessage
}

func (p *boardPeer) UnmarshalJSON(b []byte) error {
	var v struct{ Attached bool }
	err := json.Unmarshal(b, &v)
	p.Attached, p.raw = v.Attached, slices.Clone(b)
	return err
}

// boardOf is the board c is served by.
func boardOf(c *pipeClient) (board, error) {
	ctx, cancel := step()
	defer cancel()
	var out board
	err := callTool(ctx, c, "majordomus_peers", nil, &out)
	return out, err
}

// b6 assembles the memory figures gathered by B2, B3 and B5.
func (b *bench) b6() []Figure {
	const note = "VmHWM read just before the client leaves. Bridges: the B2 and B3 bridges after their call loops " +
		"and every storm bridge after initialize and one call; standalone: after the B2 loop's calls and after one call " +
		"in each storm run"
	bridge := absolute("B6", "peak RSS of a bridge process", "max", b.mem.bridge,
		"--standalone", b.mem.standalone, 15, "≤ 15 MiB")
	bridge.Note = note
	pss := absolute("B6", "PSS of a bridge (shared pages divided among their sharers)", "max", b.mem.bridgePSS,
		"--standalone", b.mem.standalonePSS, math.Inf(1), "reported")
	pss.Result, pss.Note = "info", "Pss of /proc/<pid>/smaps_rollup, read with VmHWM: what a bridge adds to the machine's memory"
	lh := absolute("B6", fmt.Sprintf("peak RSS of a leaseholder serving %d sessions", b.storm), "max", b.mem.leaseholder,
		"--standalone", b.mem.standalone, 60, "≤ 60 MiB")
	return []Figure{bridge, pss, lh}
}
