package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// roundTrips calls majordomus_repository through each client, warm-up
// calls first, and returns one series per client. The clients take turns a
// round at a time (roundCalls calls each), so that every client meets the
// same background load, and each call pays for its own client's work
// alone: the Node bridges keep a processor busy after they answer (in B3,
// 2.5 and 1.9 ms of CPU a call against 1.9 and 1.5 ms to answer it), and
// interleaved call by call, whichever client came next paid for that too.
// A round's first call, which follows another client's, is not recorded.
// made is how many calls each client made, recorded or not.
func roundTrips(clients []rpc, warm, calls int) (out []*series, made int, err error) {
	out = make([]*series, len(clients))
	for i := range out {
		out[i] = newSeries("ms")
	}
	for n := 0; n < warm+calls; n += roundCalls {
		for i, c := range clients {
			for k := range roundCalls + 1 {
				ctx, cancel := step()
				start := time.Now()
				err := callTool(ctx, c, "majordomus_repository", nil, nil)
				took := time.Since(start)
				cancel()
				if err != nil {
					return nil, 0, fmt.Errorf("call %d: %w", n+k, err)
				}
				if k > 0 && n+k > warm {
					out[i].addDur(took)
				}
			}
		}
		made += roundCalls + 1
	}
	return out, made, nil
}

// bridged are the log lines of a client whose session a bridge carries to
// the checkout's server (internal/node): attached at once, or after being
// answered in process, or served alone first.
var bridged = []string{"bridging this stdio session", "joined the checkout's shared server"}

// roundCalls is how many calls a client makes in a row in roundTrips.
const roundCalls = 25

// b2b3 measures B2 (our bridge vs a keep-alive HTTP client straight to
// /mcp) and B3 (mcp-remote and supergateway vs our bridge) against one
// leaseholder, and the bridge's and a standalone's peak RSS after the same
// calls (for B6).
func (b *bench) b2b3() ([]Figure, error) {
	lh, err := b.newLeaseholder("B2", 0)
	if err != nil {
		return nil, err
	}
	defer lh.c.close()
	var bridges [3]*pipeClient // listing tools; never listing them; a 2026-07-28 client
	for i := range bridges {
		if bridges[i], err = b.spawn(lh.dir); err != nil {
			return nil, err
		}
		defer bridges[i].close()
	}
	bridge, unlisted, bridgedModern := bridges[0], bridges[1], bridges[2]
	bridgedModern.modern = "bench-bridge-modern"
	var directs [3]*directClient // keep-alive; a new connection per call; a 2026-07-28 client
	for i := range directs {
		directs[i] = newDirectClient(lh.url, lh.authorization)
		defer directs[i].close()
	}
	direct, dialing, directModern := directs[0], directs[1], directs[2]
	dialing.fresh, directModern.modern = true, "bench-direct-modern"
	ctx, cancel := step()
	defer cancel()
	if err := initialize(ctx, bridge, "bench-bridge"); err != nil {
		return nil, fmt.Errorf("B2 bridge: %w", err)
	}
	if _, err := bridge.waitLog(ctx, "bridging this stdio session"); err != nil {
		return nil, fmt.Errorf("B2: the second client did not attach: %w", err)
	}
	// A client that never lists tools: its bridge learns which are safe to
	// resend (and may ride kept connections) from the server itself.
	if err := handshake(ctx, unlisted, "bench-bridge-unlisted"); err != nil {
		return nil, fmt.Errorf("B2 bridge, tools never listed: %w", err)
	}
	// A client whose host gives it sockets, as hosts built on Node do.
	socketed, err := b.start(b.bin, []string{"--http-port", "0"}, lh.dir, nil, true)
	if err != nil {
		return nil, fmt.Errorf("B2 bridge on sockets: %w", err)
	}
	defer socketed.close()
	if err := initialize(ctx, socketed, "bench-bridge-sockets"); err != nil {
		return nil, fmt.Errorf("B2 bridge on sockets: %w", err)
	}
	if err := initialize(ctx, direct, "bench-direct"); err != nil {
		return nil, fmt.Errorf("B2 direct: %w", err)
	}
	if err := initialize(ctx, dialing, "bench-direct-dialing"); err != nil {
		return nil, fmt.Errorf("B2 direct, dialing: %w", err)
	}
	// The same for a 2026-07-28 client: no session, _meta in every request.
	if err := discover(ctx, bridgedModern); err != nil {
		return nil, fmt.Errorf("B2 bridge, 2026-07-28: %w", err)
	}
	if err := discover(ctx, directModern); err != nil {
		return nil, fmt.Errorf("B2 direct, 2026-07-28: %w", err)
	}
	for _, c := range []*pipeClient{unlisted, bridgedModern, socketed} { // their rows say "bridged"
		if _, err := c.proc.WaitLogAny(ctx, bridged...); err != nil {
			return nil, fmt.Errorf("B2: a client that should bridge did not attach: %w", err)
		}
	}
	cpu0, _ := cpuTime(bridge.pid())
	s, made, err := roundTrips([]rpc{bridge, direct, dialing, unlisted, bridgedModern, directModern, socketed}, b.calls/10, b.calls)
	if err != nil {
		return nil, fmt.Errorf("B2: %w", err)
	}
	cpu1, _ := cpuTime(bridge.pid())
	viaBridge, straight := s[0], s[1]
	figs := []Figure{
		compare("B2", "tools/call majordomus_repository via a bridged stdio session", "p50",
			viaBridge, "keep-alive HTTP client straight to /mcp", straight, 1.5, "≤ 1.5× at p50"),
		compare("B2", "the same, at p99", "p99",
			viaBridge, "keep-alive HTTP client straight to /mcp", straight, 1e9, "reported"),
		compare("B2", "the same through a bridge whose client never lists tools", "p50",
			s[3], "keep-alive HTTP client straight to /mcp", straight, 1.5, "≤ 1.5× at p50"),
		compare("B2", "the same for a 2026-07-28 client (no session, _meta in every request)", "p50",
			s[4], "a 2026-07-28 keep-alive HTTP client straight to /mcp", s[5], 1.5, "≤ 1.5× at p50"),
		compare("B2", "the same over socket stdio (as hosts built on Node give)", "p50",
			s[6], "keep-alive HTTP client straight to /mcp", straight, 1.5, "≤ 1.5× at p50"),
		compare("B2", "diagnostic: HTTP client straight to /mcp, a new connection per call (as the bridge posts)", "p50",
			s[2], "keep-alive HTTP client straight to /mcp", straight, 1e9, "—"),
	}
	figs[1].Result, figs[5].Result = "info", "info"
	perCall := ms(cpu1-cpu0) * 1000 / float64(made) // every call it made, the rounds' unrecorded first ones too
	figs[0].Extra = map[string]any{"bridge_cpu_us_per_call": round(perCall)}
	figs[0].Note = fmt.Sprintf("the bridge process spends %.0f µs of CPU per call (user+system, /proc/<pid>/stat)", perCall)
	for _, c := range []*pipeClient{bridge, unlisted, bridgedModern, socketed} { // B6: every B2 bridge
		_ = memOf(c.pid(), b.mem.bridge, b.mem.bridgePSS)
	}
	if err := b.standaloneRSS(lh.dir, made); err != nil {
		return nil, fmt.Errorf("B6 standalone: %w", err)
	}
	return append(figs, b.b3(lh)...), nil
}

// standaloneRSS runs a --standalone client through calls calls and records
// its peak RSS: the baseline of B6.
func (b *bench) standaloneRSS(dir string, calls int) error {
	c, err := b.spawn(dir, "--standalone")
	if err != nil {
		return err
	}
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*stepTimeout)
	defer cancel()
	if err := initialize(ctx, c, "bench-standalone"); err != nil {
		return err
	}
	for range calls {
		if err := callTool(ctx, c, "majordomus_repository", nil, nil); err != nil {
			return err
		}
	}
	return memOf(c.pid(), b.mem.standalone, b.mem.standalonePSS)
}

// b3 runs our bridge, mcp-remote and supergateway side by side, each a stdio
// client bridged to lh's server.
func (b *bench) b3(lh *leaseProc) []Figure {
	skip := func(name, why string) Figure {
		return Figure{ID: "B3", Measure: name + " bridging stdio to the same server", Stat: "p50",
			Goal: "ours ≥ 3× faster at p50", Result: "skipped", Note: why}
	}
	if b.peers == "" {
		return []Figure{skip("mcp-remote", b.noPeers), skip("supergateway", b.noPeers)}
	}
	home := filepath.Join(b.tmp, "node-home")
	_ = os.MkdirAll(home, 0o700)
	env := append(os.Environ(), "HOME="+home, "MCP_REMOTE_CONFIG_DIR="+filepath.Join(home, "mcp-auth"))
	bin := filepath.Join(b.peers, "node_modules", ".bin")
	peers := []struct {
		name, cmd string
		args      []string
	}{
		{"mcp-remote", filepath.Join(bin, "mcp-remote"), []string{lh.url + "/mcp", "--transport", "http-only", "--header", "Authorization:" + lh.authorization}},
		{"supergateway", filepath.Join(bin, "supergateway"), []string{"--streamableHttp", lh.url + "/mcp", "--logLevel", "none", "--header", "Authorization: " + lh.authorization}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*stepTimeout)
	defer cancel()
	ours, err := b.spawn(lh.dir)
	if err == nil {
		defer ours.close()
		err = initialize(ctx, ours, "bench-ours")
	}
	if err == nil {
		_, err = ours.proc.WaitLogAny(ctx, bridged...)
	}
	if err != nil {
		return []Figure{skip("mcp-remote", err.Error()), skip("supergateway", err.Error())}
	}
	clients := []rpc{ours}
	var names []string
	var figs []Figure
	for _, p := range peers {
		c, err := b.start(p.cmd, p.args, lh.dir, env, false)
		if err == nil {
			defer c.close()
			err = initialize(ctx, c, "bench-"+p.name)
			if err == nil {
				err = callTool(ctx, c, "majordomus_repository", nil, nil)
			}
		}
		if err != nil {
			figs = append(figs, skip(p.name, "cannot bridge to our server: "+err.Error()))
			continue
		}
		clients = append(clients, c)
		names = append(names, p.name)
	}
	if len(names) == 0 {
		return figs
	}
	calls := max(b.calls/2, 20)
	port := lh.url[strings.LastIndex(lh.url, ":")+1:]
	waits := timeWaits(port)
	s, made, err := roundTrips(clients, calls/10, calls)
	if err != nil {
		return append(figs, skip(fmt.Sprint(names), err.Error()))
	}
	b.note("B3: during its loop (%d calls per client) the server's port gained %d sockets in TIME_WAIT "+
		"(connections the server closed first): our bridge keeps its connections for what may be resent", made, timeWaits(port)-waits)
	for i, name := range names {
		f := compare("B3", name+" bridging stdio to the same server", "p50",
			s[i+1], "our bridge", s[0], math.Inf(1), "ours ≥ 3× faster at p50")
		f.Result = verdict(f.Exact >= 3) // unrounded, as every goal (README)
		f.Note = fmt.Sprintf("ratio is %s's p50 over ours: ours is %.2f× faster", name, f.Ratio)
		figs = append(figs, f)
	}
	_ = memOf(ours.pid(), b.mem.bridge, b.mem.bridgePSS)
	return figs
}
