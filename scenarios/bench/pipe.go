package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// pipeClient is a lean stdio MCP client for timed call loops. The test
// client internal/mcpclient keeps every frame and rescans all of them for
// each answer, which costs O(calls) per call and would bias a loop of
// thousands of calls. This one reads stdout in the calling goroutine, with
// the context's deadline on the pipe, so that the harness adds no goroutine
// hand-off of its own to a round trip; mcpclient starts the process, sends,
// and keeps its logs and its exit (StartUnread). It also runs stdio
// clients that are not majordomus-mcp (mcp-remote, supergateway).
type pipeClient struct {
	name   string
	proc   *mcpclient.Process // its logs and its exit
	stdout *os.File
	out    *bufio.Reader // read only by the caller of call/await

	drainOnce sync.Once

	mu    sync.Mutex
	heard map[string]time.Time // when each notification was last read
}

// startPipe spawns name with args in dir; env nil means the parent's.
func startPipe(name string, args []string, dir string, env []string) (*pipeClient, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	proc, stdout, err := mcpclient.StartUnread(cmd)
	if err != nil {
		return nil, err
	}
	return &pipeClient{name: name, proc: proc, stdout: stdout, out: bufio.NewReaderSize(stdout, 64<<10)}, nil
}

// pid is the process id.
func (c *pipeClient) pid() int { return c.proc.Cmd.Process.Pid }

// jsonRaw is a JSON value passed through undecoded.
type jsonRaw = json.RawMessage

// frame is what a client reads of each message it receives.
type frame struct {
	ID     jsonRaw `json:"id"`
	Method string  `json:"method"`
	Result jsonRaw `json:"result"`
	Error  jsonRaw `json:"error"`
}

// call sends a request and reads stdout until its answer, skipping
// notifications and anything else. A JSON-RPC error is returned as an error.
func (c *pipeClient) call(ctx context.Context, method string, params any) (jsonRaw, error) {
	id, err := c.proc.Send(method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: writing %s: %w", c.name, method, err)
	}
	return c.await(ctx, method, id)
}

// awaitAnswer waits for the answer to request id, whatever it says.
func (c *pipeClient) awaitAnswer(ctx context.Context, id jsonRaw) error {
	_, err := c.await(ctx, "request "+string(id), id)
	return err
}

func (c *pipeClient) await(ctx context.Context, what string, id jsonRaw) (jsonRaw, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(stepTimeout)
	}
	if err := c.stdout.SetReadDeadline(deadline); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, fmt.Errorf("%s: waiting for the answer to %s: %w", c.name, what, context.DeadlineExceeded)
		}
		if err != nil {
			return nil, fmt.Errorf("%s exited before answering %s (%v): %s", c.name, what, err, c.tail(5))
		}
		var f frame
		if json.Unmarshal(line, &f) != nil {
			continue
		}
		if f.Method != "" && len(f.ID) == 0 {
			c.noteHeard(f.Method)
		}
		if f.Method != "" || string(f.ID) != string(id) {
			continue
		}
		if f.Error != nil {
			return nil, fmt.Errorf("%s: %s answered an error: %s", c.name, what, f.Error)
		}
		return f.Result, nil
	}
}

// initialize performs the MCP handshake and lists the tools, as hosts do.
func (c *pipeClient) initialize(ctx context.Context, client string) error {
	if err := c.handshake(ctx, client); err != nil {
		return err
	}
	_, err := c.call(ctx, "tools/list", map[string]any{})
	return err
}

// handshake performs the MCP handshake alone: initialize, then
// notifications/initialized.
func (c *pipeClient) handshake(ctx context.Context, client string) error {
	if _, err := c.call(ctx, "initialize", initParams(client)); err != nil {
		return err
	}
	return c.proc.Notify("notifications/initialized", nil)
}

// tool calls a tool and fails on a tool error result.
func (c *pipeClient) tool(ctx context.Context, name string, args map[string]any) (jsonRaw, error) {
	res, err := c.call(ctx, "tools/call", toolParams(name, args))
	if err != nil {
		return nil, err
	}
	return res, toolError(name, res)
}

// waitLog waits for a stderr line containing every part and returns it.
func (c *pipeClient) waitLog(ctx context.Context, parts ...string) (string, error) {
	line, err := c.proc.WaitLog(ctx, parts...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", c.name, err)
	}
	return line, nil
}

// hasExited reports whether the process has exited.
func (c *pipeClient) hasExited() bool { return c.waitExit(0) }

// serverURLs are the URLs the process said it served at.
func (c *pipeClient) serverURLs() []string {
	var urls []string
	for _, l := range c.proc.Logs() {
		if !strings.Contains(l, "shared server listening on") {
			continue
		}
		var line struct{ URL string }
		if json.Unmarshal([]byte(l), &line) == nil && line.URL != "" {
			urls = append(urls, line.URL)
		}
	}
	return urls
}

// tail is the last n stderr lines, for error messages.
func (c *pipeClient) tail(n int) string {
	logs := c.proc.Logs()
	return strings.Join(logs[max(0, len(logs)-n):], " | ")
}

// close ends stdin, waits up to grace for the process to leave, then kills it.
func (c *pipeClient) close(grace time.Duration) {
	c.drain()
	_ = c.proc.CloseStdin()
	if c.waitExit(grace) {
		return
	}
	c.kill()
}

// kill ends the process at once (SIGKILL) and waits for it to be reaped.
func (c *pipeClient) kill() {
	c.drain()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.proc.Kill(ctx)
}

// drain discards stdout from now on, so that the process never blocks on
// a full pipe while it leaves. No call may follow.
func (c *pipeClient) drain() {
	c.drainOnce.Do(func() {
		_ = c.stdout.SetReadDeadline(time.Time{})
		go func() { _, _ = io.Copy(io.Discard, c.out) }()
	})
}

// waitExit waits up to d for the process to exit and says whether it did.
func (c *pipeClient) waitExit(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := c.proc.Wait(ctx)
	return err == nil
}

// initParams is the initialize request every client of the harness sends.
func initParams(client string) map[string]any {
	return map[string]any{
		"protocolVersion": protocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": client, "version": "1.0.0"},
	}
}

func toolParams(name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"name": name, "arguments": args}
}

// toolError fails on a tools/call result that says isError.
func toolError(name string, res json.RawMessage) error {
	var r struct {
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("%s: the result is not JSON: %w", name, err)
	}
	if r.IsError {
		return errors.New(name + " answered a tool error: " + string(res))
	}
	return nil
}

// noteHeard records that a notification was read now.
func (c *pipeClient) noteHeard(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heard == nil {
		c.heard = map[string]time.Time{}
	}
	c.heard[method] = time.Now()
}

// heardSince reports whether method was read after t.
func (c *pipeClient) heardSince(method string, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard[method].After(t)
}
