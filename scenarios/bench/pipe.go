package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// pipeClient is the harness's stdio MCP client, lean enough for timed call
// loops. The test client internal/mcpclient keeps every frame and rescans
// all of them for each answer, which costs O(calls) per call and would bias
// a loop of thousands of calls. This one reads stdout in the calling
// goroutine, with the context's deadline on the pipe, so that the harness
// adds no goroutine hand-off of its own to a round trip; mcpclient starts
// the process, sends, and keeps its logs and its exit (StartUnread). It
// also runs stdio clients that are not majordomus-mcp (mcp-remote,
// supergateway).
type pipeClient struct {
	name   string
	proc   *mcpclient.Process // its logs and its exit
	stdout *os.File
	out    *bufio.Reader // read only by the caller of call
	modern string        // the client's name when it speaks 2026-07-28 (modernRevision)

	drainOnce sync.Once

	mu    sync.Mutex
	heard map[string]time.Time // when each notification was last read
}

// pid is the process id.
func (c *pipeClient) pid() int { return c.proc.Cmd.Process.Pid }

// frame is what a client reads of each message it receives.
type frame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// call sends a request and reads stdout until its answer, skipping
// notifications and anything else. A JSON-RPC error is returned as an error.
func (c *pipeClient) call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
	if c.modern != "" {
		params = mcpclient.WithMeta(params, mcpclient.ModernMeta(c.modern))
	}
	id, err := c.proc.Send(method, params)
	if err != nil {
		return nil, fmt.Errorf("%s: writing %s: %w", c.name, method, err)
	}
	return c.await(ctx, method, id)
}

func (c *pipeClient) await(ctx context.Context, what string, id json.RawMessage) (json.RawMessage, error) {
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
			c.mu.Lock()
			c.heard[f.Method] = time.Now()
			c.mu.Unlock()
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

// notify sends a notification.
func (c *pipeClient) notify(method string) error { return c.proc.Notify(method, nil) }

// heardSince reports whether notification method was read after t.
func (c *pipeClient) heardSince(method string, t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heard[method].After(t)
}

// waitLog waits for a stderr line containing every part and returns it.
func (c *pipeClient) waitLog(ctx context.Context, parts ...string) (string, error) {
	line, err := c.proc.WaitLog(ctx, parts...)
	if err != nil {
		return "", fmt.Errorf("%s: %w\n%s", c.name, err, c.tail(8))
	}
	return line, nil
}

// tail is the last n stderr lines, for error messages.
func (c *pipeClient) tail(n int) string {
	logs := c.proc.Logs()
	return strings.Join(logs[max(0, len(logs)-n):], " | ")
}

// closeGrace is how long a client may take to leave once its stdin closed.
const closeGrace = 10 * time.Second

// close ends the client as a host does (stdin closed), waits up to
// closeGrace for the process to leave, then kills it.
func (c *pipeClient) close() {
	c.drain()
	_ = c.proc.CloseStdin()
	if !c.waitExit(closeGrace) {
		c.kill()
	}
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

// hasExited reports whether the process has exited.
func (c *pipeClient) hasExited() bool { return c.waitExit(0) }

// rpc is what every client of the harness does: a stdio client, or the
// direct HTTP client. A client of revision 2026-07-28 (its modern field
// set) adds that revision's _meta to every request itself.
type rpc interface {
	call(ctx context.Context, method string, params map[string]any) (json.RawMessage, error)
	notify(method string) error
}

// protocol is the MCP revision every client of the harness asks for;
// modernRevision is the one the 2026-07-28 rows of B2 speak: no session,
// server/discover, and the revision, capabilities and identity in every
// request's _meta.
const protocol, modernRevision = "2025-06-18", "2026-07-28"

// initParams is the initialize request every client of the harness sends.
func initParams(client string) map[string]any {
	return map[string]any{
		"protocolVersion": protocol,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": client, "version": "1.0.0"},
	}
}

// handshake is initialize, then notifications/initialized.
func handshake(ctx context.Context, c rpc, client string) error {
	if _, err := c.call(ctx, "initialize", initParams(client)); err != nil {
		return err
	}
	return c.notify("notifications/initialized")
}

// initialize is the handshake, then tools/list, as hosts do: a bridge
// learns from it which tools may be resent.
func initialize(ctx context.Context, c rpc, client string) error {
	if err := handshake(ctx, c, client); err != nil {
		return err
	}
	_, err := c.call(ctx, "tools/list", map[string]any{})
	return err
}

// discover opens a 2026-07-28 client as its host does, and lists the tools.
func discover(ctx context.Context, c rpc) error {
	res, err := c.call(ctx, "server/discover", nil)
	if err != nil {
		return err
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(res, &d) != nil || len(d.SupportedVersions) == 0 || d.SupportedVersions[0] != modernRevision {
		return fmt.Errorf("server/discover answered %s", res)
	}
	_, err = c.call(ctx, "tools/list", nil)
	return err
}

// callTool calls a tool and fails on a tool error result; out, unless nil,
// receives its structured content.
func callTool(ctx context.Context, c rpc, name string, args map[string]any, out any) error {
	if args == nil {
		args = map[string]any{}
	}
	res, err := c.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("%s: the result is not JSON: %w", name, err)
	}
	if r.IsError {
		return errors.New(name + " answered a tool error: " + string(res))
	}
	if out != nil {
		if err := json.Unmarshal(r.StructuredContent, out); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// repository calls majordomus_repository, bounded by one step.
func repository(c rpc) error {
	ctx, cancel := step()
	defer cancel()
	return callTool(ctx, c, "majordomus_repository", nil, nil)
}
