package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// serving are what a process logs once it knows what serves its client,
// which it does before its initialize is answered.
var serving = []string{"shared server listening on", "bridging this stdio session", "cannot use the shared server"}

// initialize performs a client's handshake and prints it, what the process
// said while electing what serves it, and what the client was told.
func (d *demo) initialize(p *demoProcess) {
	if d.err != nil || p == nil {
		return
	}
	d.say("→ %s: initialize", p.name)
	res, err := p.Initialize(d.ctx, p.name, "2025-11-25")
	if err != nil {
		d.err = fmt.Errorf("%s: %w", p.name, err)
		return
	}
	d.said(p, serving...)
	if d.err != nil {
		return
	}
	d.say("← %s %s, protocol %s; instructions:", res.ServerInfo.Name, res.ServerInfo.Version, res.ProtocolVersion)
	for line := range strings.SplitSeq(strings.TrimSpace(res.Instructions), "\n") {
		d.say("    %s", line)
	}
}

// call sends a request and shows it, what the process said while
// answering it, then its result. says are texts one of which the process
// logs before it answers (see said).
func (d *demo) call(p *demoProcess, method string, params any, show func(io.Writer, json.RawMessage), says ...string) {
	if d.err != nil || p == nil {
		return
	}
	d.say("→ %s: %s %s", p.name, method, compact(params))
	r, err := p.Call(d.ctx, method, params)
	switch {
	case err != nil:
		d.err = fmt.Errorf("%s: %s: %w", p.name, method, err)
	case r.Error != nil:
		d.err = fmt.Errorf("%s: %s: %w", p.name, method, r.Error)
	default:
		d.said(p, says...)
		if d.err == nil {
			show(d.out, r.Result)
		}
	}
}

func (d *demo) tool(p *demoProcess, name string, arguments map[string]any, says ...string) {
	if arguments == nil {
		arguments = map[string]any{}
	}
	d.call(p, "tools/call", map[string]any{"name": name, "arguments": arguments}, showToolResult, says...)
}

// said shows what a process logged about sharing since last shown (its
// transitions, take-overs, and why it serves as it does), once it has
// logged one of texts (none: what has come). Its log and its answers travel
// on different pipes, so an answer can arrive before the lines logged on
// the way to it: the text, logged last before the answer, says they have
// all come. Its callers have checked d.err and p.
func (d *demo) said(p *demoProcess, texts ...string) {
	if len(texts) > 0 {
		if _, d.err = p.WaitLogAny(d.ctx, texts...); d.err != nil {
			return
		}
	}
	logs := p.Logs()
	for _, line := range logs[p.shown:] {
		var e struct {
			Level, Msg, From, To, Trigger, Rule string
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Msg == "transition":
			rule := ""
			if e.Rule != "" {
				rule = ", " + e.Rule
			}
			d.say("  [%s pid %d] %s → %s (%s%s)", p.name, p.Cmd.Process.Pid, e.From, e.To, e.Trigger, rule)
		case e.Level == "warn" || strings.Contains(e.Msg, "listening on") || strings.Contains(e.Msg, "bridging") ||
			strings.Contains(e.Msg, "took over") || strings.Contains(e.Msg, "re-attached"):
			d.say("  [%s pid %d] %s: %s", p.name, p.Cmd.Process.Pid, e.Level, e.Msg)
		}
	}
	p.shown = len(logs)
}

// peers shows a client's view of the board, one line a peer.
func (d *demo) peers(p *demoProcess, says ...string) {
	d.call(p, "tools/call", map[string]any{"name": "majordomus_peers", "arguments": map[string]any{}}, func(w io.Writer, result json.RawMessage) {
		var r struct {
			StructuredContent struct {
				Count  int    `json:"count"`
				Caller string `json:"caller"`
				Peers  []struct {
					ID           string `json:"id"`
					Attached     bool   `json:"attached"`
					Transport    string `json:"transport"`
					Client       struct{ Name string }
					Announcement *struct{ Intent string }
				} `json:"peers"`
			} `json:"structuredContent"`
		}
		_ = json.Unmarshal(result, &r)
		board := r.StructuredContent
		fmt.Fprintf(w, "← a board of %d; the caller is %s:\n", board.Count, board.Caller)
		for _, peer := range board.Peers {
			state := "attached"
			if !peer.Attached {
				state = "departed"
			}
			line := fmt.Sprintf("    %s %-12s %-6s %s", peer.ID, peer.Client.Name, peer.Transport, state)
			if peer.Announcement != nil {
				line += ": " + peer.Announcement.Intent
			}
			fmt.Fprintln(w, line)
		}
	}, says...)
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
