package node

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// client is an MCP client on a node's stdio.
type client struct {
	t      *testing.T
	name   string
	stdin  *io.PipeReader
	in     *io.PipeWriter
	stdout *io.PipeWriter
	frames chan map[string]any
	nextID int
}

func newClient(t *testing.T, name string) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, name: name, stdin: inR, in: inW, stdout: outW, frames: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var f map[string]any
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				c.frames <- f
			}
		}
	}()
	return c
}

// send writes one message.
func (c *client) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	line, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatalf("%s: writing to the node: %v", c.name, err)
	}
}

// call sends a request and returns its answer; what comes before it is
// kept in notes.
func (c *client) call(method string, params any, notes *[]map[string]any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := float64(c.nextID)
	c.send(map[string]any{"id": id, "method": method, "params": params})
	return c.answer(id, notes)
}

// answer waits for the answer to request id; what comes before it is kept
// in notes.
func (c *client) answer(id float64, notes *[]map[string]any) map[string]any {
	c.t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case f := <-c.frames:
			if f["id"] == id && f["method"] == nil {
				return f
			}
			if notes != nil {
				*notes = append(*notes, f)
			}
		case <-timeout:
			c.t.Fatalf("%s: no answer to request %v", c.name, id)
		}
	}
}

// initialize opens the client's session, announcing itself as name, and
// returns the peer id the server gave it.
func (c *client) initialize() string {
	c.t.Helper()
	a := c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": c.name, "version": "1"},
	}, nil)
	if a["result"] == nil {
		c.t.Fatalf("%s: initialize answered %v", c.name, a)
	}
	c.send(map[string]any{"method": "notifications/initialized"})
	meta, _ := a["result"].(map[string]any)["_meta"].(map[string]any)
	id, _ := meta["io.majordomus/peer"].(string)
	return id
}

// caller is the peer id majordomus_peers says the client has.
func (c *client) caller() string {
	c.t.Helper()
	var board struct{ Caller string }
	if err := json.Unmarshal([]byte(c.tool("majordomus_peers", map[string]any{}, nil)), &board); err != nil {
		c.t.Fatal(err)
	}
	return board.Caller
}

// tool calls a tool and returns its text, failing the test on an error.
func (c *client) tool(name string, args map[string]any, notes *[]map[string]any) string {
	c.t.Helper()
	a := c.call("tools/call", map[string]any{"name": name, "arguments": args}, notes)
	res, _ := a["result"].(map[string]any)
	if res == nil || res["isError"] == true {
		c.t.Fatalf("%s: %s answered %v", c.name, name, a)
	}
	content, _ := res["content"].([]any)
	var text strings.Builder
	for _, item := range content {
		if m, ok := item.(map[string]any); ok {
			text.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return text.String()
}

// awaitNote waits for a notifications/message saying text: among notes
// (what came before an answer), or still to come.
func (c *client) awaitNote(notes []map[string]any, text string) {
	c.t.Helper()
	if told(notes, text) {
		return
	}
	timeout := time.After(wait)
	for {
		select {
		case f := <-c.frames:
			if told([]map[string]any{f}, text) {
				return
			}
			notes = append(notes, f)
		case <-timeout:
			c.t.Fatalf("%s: never told %q; it got %v", c.name, text, notes)
		}
	}
}

func (c *client) close() {
	_ = c.in.Close()
	_ = c.stdout.Close()
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
