package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"majordomus-mcp/example"
	"majordomus-mcp/internal/mcpclient"
)

// demoTimeout bounds every step of the demo.
const demoTimeout = 20 * time.Second

// runDemo writes the embedded example checkout to a temporary directory,
// starts this binary on it as a real child process, and drives a short
// scripted MCP session, printing each exchange.
func runDemo(ctx context.Context, env *environment, args []string) error {
	if len(args) > 0 {
		return usageError("demo takes no arguments")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable: %w", err)
	}
	tmp, err := os.MkdirTemp("", "majordomus-demo-")
	if err != nil {
		return fmt.Errorf("making the demo directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	repo := filepath.Join(tmp, "example")
	if err := example.WriteCheckout(repo); err != nil {
		return err
	}
	out := env.stdout
	fmt.Fprintf(out, "The example checkout is in %s; its .ai/ layer holds a few rules, an ADR, a prompt and a glossary.\n", repo)

	args = []string{"--standalone", "--repo", repo}
	client, err := mcpclient.Start(self, args, repo, nil)
	if err != nil {
		return err
	}
	defer client.Kill(context.Background())
	fmt.Fprintf(out, "Started `majordomus-mcp %s` (pid %d) as an MCP host would, with pipes for stdin and stdout.\n\n",
		strings.Join(args, " "), client.Cmd.Process.Pid)

	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()
	d := demo{ctx: ctx, out: out, client: client}
	d.step("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "demo-agent", "version": "1.0.0"},
	}, showInitialize)
	if d.err == nil {
		d.err = client.Notify("notifications/initialized", nil)
		fmt.Fprintln(out, "→ notifications/initialized (no answer is owed)")
		fmt.Fprintln(out)
	}
	d.step("tools/list", nil, showTools)
	d.tool("majordomus_repository", nil)
	d.tool("majordomus_search", map[string]any{"query": "announce", "limit": 3})
	d.tool("majordomus_announce", map[string]any{"intent": "tighten the review prompt", "scope": []string{".ai/repo/prompts"}})
	d.tool("majordomus_peers", nil)
	if d.err != nil {
		return d.err
	}

	fmt.Fprintln(out, "Closing stdin, as a host does when the agent leaves…")
	_ = client.CloseStdin()
	exit, err := client.Wait(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The server exited with status %d. Everything it printed on stdout was a protocol frame (%d frames); its log went to stderr (%d lines).\n",
		exit.Code, len(client.Frames()), len(client.Logs()))
	return nil
}

// demo runs the scripted steps, stopping at the first error.
type demo struct {
	ctx    context.Context
	out    io.Writer
	client *mcpclient.Process
	err    error
}

func (d *demo) step(method string, params any, show func(io.Writer, json.RawMessage)) {
	if d.err != nil {
		return
	}
	fmt.Fprintf(d.out, "→ %s %s\n", method, compact(params))
	r, err := d.client.Call(d.ctx, method, params)
	if err != nil {
		d.err = err
		return
	}
	if r.Error != nil {
		d.err = fmt.Errorf("%s: %w", method, r.Error)
		return
	}
	show(d.out, r.Result)
	fmt.Fprintln(d.out)
}

func (d *demo) tool(name string, arguments map[string]any) {
	if arguments == nil {
		arguments = map[string]any{}
	}
	d.step("tools/call", map[string]any{"name": name, "arguments": arguments}, showToolResult)
}

func showInitialize(w io.Writer, result json.RawMessage) {
	var r mcpclient.InitializeResult
	_ = json.Unmarshal(result, &r)
	fmt.Fprintf(w, "← %s %s, protocol %s\n", r.ServerInfo.Name, r.ServerInfo.Version, r.ProtocolVersion)
	fmt.Fprintln(w, "  instructions:")
	for _, line := range strings.Split(strings.TrimSpace(r.Instructions), "\n") {
		fmt.Fprintln(w, "    "+line)
	}
}

func showTools(w io.Writer, result json.RawMessage) {
	var r struct {
		Tools []struct {
			Name        string `json:"name"`
			Annotations struct {
				ReadOnly bool `json:"readOnlyHint"`
			} `json:"annotations"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(result, &r)
	fmt.Fprintf(w, "← %d tools:\n", len(r.Tools))
	for _, t := range r.Tools {
		mode := "changes the board"
		if t.Annotations.ReadOnly {
			mode = "read-only"
		}
		fmt.Fprintf(w, "    %-24s %s\n", t.Name, mode)
	}
}

func showToolResult(w io.Writer, result json.RawMessage) {
	var r struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	_ = json.Unmarshal(result, &r)
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, r.StructuredContent, "    ", "  ")
	fmt.Fprintf(w, "← %s\n", strings.TrimRight(pretty.String(), "\n"))
}

func compact(v any) string {
	if v == nil {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}
