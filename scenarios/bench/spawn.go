package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

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

	notes []string

	mu      sync.Mutex // guards clients: a storm starts them at once
	clients []*pipeClient
}

// step is a context bounding one wait.
func step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), stepTimeout)
}

// checkout writes the embedded example checkout into a fresh directory.
func (b *bench) checkout() (string, error) {
	dir, err := os.MkdirTemp(b.tmp, "checkout-")
	if err != nil {
		return "", err
	}
	return dir, example.WriteCheckout(dir)
}

// spawn starts majordomus-mcp in dir, always on any free port.
func (b *bench) spawn(dir string, args ...string) (*pipeClient, error) {
	return b.start(b.bin, append([]string{"--http-port", "0"}, args...), dir, nil, false)
}

// start starts any stdio MCP client, on pipes or (sockets) with a socket
// for stdin and another for stdout, as hosts built on Node give their
// child; cleanup ends it if nothing did.
func (b *bench) start(name string, args []string, dir string, env []string, sockets bool) (*pipeClient, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env // env nil: the parent's
	proc, stdout, err := mcpclient.StartUnread(cmd, sockets)
	if err != nil {
		return nil, err
	}
	c := &pipeClient{name: name, proc: proc, stdout: stdout, out: bufio.NewReaderSize(stdout, 64<<10),
		heard: map[string]time.Time{}}
	b.mu.Lock()
	b.clients = append(b.clients, c)
	b.mu.Unlock()
	return c, nil
}

// cleanup kills whatever the run started and is still running.
func (b *bench) cleanup() {
	b.mu.Lock()
	clients := b.clients
	b.clients = nil
	b.mu.Unlock()
	for _, c := range clients {
		c.kill()
	}
}

// note records a remark for the report; only the measuring goroutine notes.
func (b *bench) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

// logField is one field of a JSON log line: a string, or a number (zap
// writes durations as seconds).
func logField[T any](line, field string) (T, error) {
	var entry map[string]any
	var v T
	if err := json.Unmarshal([]byte(line), &entry); err != nil {
		return v, fmt.Errorf("a log line that is not JSON: %s", line)
	}
	v, ok := entry[field].(T)
	if !ok {
		return v, fmt.Errorf("the log line has no %s: %s", field, line)
	}
	return v, nil
}
