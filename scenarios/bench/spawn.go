package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// protocol is the MCP revision every client of the harness asks for.
const protocol = "2025-06-18"

// stepTimeout bounds every wait for one event (an answer, a log line, an
// exit): generous for a loaded 2-core machine; a wait ends when its event
// comes.
const stepTimeout = 30 * time.Second

// bench is one run of the harness: the binary, where it works, how many
// repetitions, and every process it started (all ended by cleanup).
type bench struct {
	bin     string // the majordomus-mcp built for this run
	tmp     string // everything the run writes
	peers   string // npm prefix holding mcp-remote and supergateway ("" = none)
	noPeers string // why there is none

	runs  int // repetitions of a spawn measure
	warm  int // warm-up repetitions, not recorded
	calls int // calls in a round-trip loop
	storm int // clients in the storm

	mem struct { // B6, gathered by B2, B3 and B5: peak RSS, and PSS beside it
		bridge, standalone, leaseholder, bridgePSS, standalonePSS *series
	}

	mu    sync.Mutex
	seq   int
	procs []*mcpclient.Process
	pipes []*pipeClient
	notes []string
}

// step is a context bounding one wait.
func step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), stepTimeout)
}

// checkout writes the embedded example checkout into a fresh directory.
func (b *bench) checkout() (string, error) {
	b.mu.Lock()
	b.seq++
	dir := filepath.Join(b.tmp, fmt.Sprintf("checkout-%03d", b.seq))
	b.mu.Unlock()
	if err := example.WriteCheckout(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// spawn starts majordomus-mcp in dir through the test client, always on any
// free port.
func (b *bench) spawn(dir string, args ...string) (*mcpclient.Process, error) {
	p, err := mcpclient.Start(b.bin, append([]string{"--http-port", "0"}, args...), dir, os.Environ())
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.procs = append(b.procs, p)
	b.mu.Unlock()
	return p, nil
}

// spawnPipe starts majordomus-mcp in dir through the lean client.
func (b *bench) spawnPipe(dir string, args ...string) (*pipeClient, error) {
	return b.startPipe(b.bin, append([]string{"--http-port", "0"}, args...), dir, nil)
}

// startPipe starts any stdio MCP client through the lean client.
func (b *bench) startPipe(name string, args []string, dir string, env []string) (*pipeClient, error) {
	c, err := startPipe(name, args, dir, env)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.pipes = append(b.pipes, c)
	b.mu.Unlock()
	return c, nil
}

// cleanup kills whatever the run started and is still running.
func (b *bench) cleanup() {
	b.mu.Lock()
	procs, pipes := b.procs, b.pipes
	b.procs, b.pipes = nil, nil
	b.mu.Unlock()
	for _, p := range procs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.Kill(ctx)
		cancel()
	}
	for _, c := range pipes {
		c.kill()
	}
}

// note records a remark for the report.
func (b *bench) note(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// timedInitialize sends initialize and waits for its answer; the caller
// times it. notifications/initialized follows, outside the timing.
func timedInitialize(p *mcpclient.Process, client string) error {
	ctx, cancel := step()
	defer cancel()
	r, err := p.Call(ctx, "initialize", initParams(client))
	if err != nil {
		return fmt.Errorf("%w\n%s", err, lastLogs(p, 8))
	}
	if r.Error != nil {
		return fmt.Errorf("initialize answered %v", r.Error)
	}
	return p.Notify("notifications/initialized", nil)
}

// callRepository calls majordomus_repository through the test client.
func callRepository(p *mcpclient.Process) error {
	ctx, cancel := step()
	defer cancel()
	isErr, text, err := p.CallTool(ctx, "majordomus_repository", nil, nil)
	if err != nil {
		return fmt.Errorf("majordomus_repository: %w\n%s", err, lastLogs(p, 8))
	}
	if isErr {
		return fmt.Errorf("majordomus_repository answered a tool error: %s", text)
	}
	return nil
}

// waitLog waits for a log line and returns it.
func waitLog(p *mcpclient.Process, parts ...string) (string, error) {
	ctx, cancel := step()
	defer cancel()
	line, err := p.WaitLog(ctx, parts...)
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, lastLogs(p, 8))
	}
	return line, nil
}

// serverURL waits for the leaseholder's "shared server listening on" line
// and returns its url field.
func serverURL(p *mcpclient.Process) (string, error) {
	line, err := waitLog(p, "shared server listening on")
	if err != nil {
		return "", err
	}
	return logString(line, "url")
}

// logString is one string field of a JSON log line.
func logString(line, field string) (string, error) {
	var entry map[string]any
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		return "", fmt.Errorf("a log line that is not JSON: %s", line)
	}
	v, ok := entry[field].(string)
	if !ok || v == "" {
		return "", fmt.Errorf("the log line has no %s: %s", field, line)
	}
	return v, nil
}

// logSeconds is one numeric field of a JSON log line (zap writes durations
// as seconds).
func logSeconds(line, field string) (float64, error) {
	var entry map[string]any
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		return 0, fmt.Errorf("a log line that is not JSON: %s", line)
	}
	v, ok := entry[field].(float64)
	if !ok {
		return 0, fmt.Errorf("the log line has no numeric %s: %s", field, line)
	}
	return v, nil
}

// stop ends a client the way a host does (stdin closed) and waits, bounded,
// for its exit; a process still running then is killed.
func stop(p *mcpclient.Process) {
	_ = p.CloseStdin()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.Wait(ctx); err != nil {
		kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.Kill(kctx)
		kcancel()
	}
}

func lastLogs(p *mcpclient.Process, n int) string {
	logs := p.Logs()
	return strings.Join(logs[max(0, len(logs)-n):], "\n")
}

// procFile reads one numeric field of a /proc file of "name: value unit" lines.
func procFile(path, field string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		if fields := strings.Fields(rest); len(fields) > 0 {
			return strconv.ParseFloat(fields[0], 64)
		}
	}
	return 0, fmt.Errorf("%s has no %s", path, field)
}

// cpuTime is a process's user+system CPU time so far (/proc/<pid>/stat).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	_, rest, ok := strings.Cut(string(b), ") ") // the command may hold spaces
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks, nil
}

// timeWaits counts the TCP sockets in TIME_WAIT whose local port is port
// (/proc/net/tcp and tcp6): the connections a server closed first.
func timeWaits(port string) int {
	n := 0
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "06" {
				continue
			}
			if _, hexPort, ok := strings.Cut(f[1], ":"); ok {
				if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && strconv.FormatUint(p, 10) == port {
					n++
				}
			}
		}
	}
	return n
}

// memOf records the peak resident set (VmHWM) of a running process into
// rss and its proportional set (Pss of /proc/<pid>/smaps_rollup: shared
// pages divided among their sharers) into pss unless nil, in MiB.
func memOf(pid int, rss, pss *series) error {
	kb, err := procFile(fmt.Sprintf("/proc/%d/status", pid), "VmHWM")
	if err != nil {
		return err
	}
	rss.add(kb / 1024)
	if kb, err := procFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid), "Pss"); err == nil && pss != nil {
		pss.add(kb / 1024)
	}
	return nil
}
