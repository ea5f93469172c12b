package node

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/machine"
)

// A tool call its server ran, and kept in the checkout's history, but
// whose answer never reached the bridge (the connection broke as the
// answer came) is sent again, as its tool may run twice; the history
// keeps the call once.
func TestACallSentAgainIsKeptInTheHistoryOnce(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, true)
	a.awaitLog("shared server listening")
	a.client.initialize()
	b.mu.Lock()
	server := b.url
	b.mu.Unlock()
	p := newCutter(t, server)
	keys.mu.Lock()
	keys.at[p.url] = "a"
	keys.mu.Unlock()
	b.set("a", p.url) // the lease names the server behind the cutter

	c := start(t, "c", co.fresh(), b, true)
	id := c.client.initialize()
	c.awaitState(machine.Attached)
	c.awaitLog("learned from the server which tools may be resent")
	p.cutAnswerTo(`"majordomus_announce"`)
	c.client.tool("majordomus_announce", map[string]any{"intent": "cut once", "scope": []string{"a/"}}, nil)
	select {
	case <-p.cut:
	default:
		t.Fatal("the call's answer was not cut: the test proves nothing")
	}

	var view struct {
		Executions []struct{ Tool, Peer string }
	}
	if err := json.Unmarshal([]byte(a.client.tool("majordomus_executions", map[string]any{}, nil)), &view); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for _, x := range view.Executions {
		if x.Tool == "majordomus_announce" && x.Peer == id {
			kept++
		}
	}
	if kept != 1 {
		t.Fatalf("the history keeps %d announcements of %s, sent once by its client and again by its bridge; want 1: %+v", kept, id, view.Executions)
	}
}

// cutter forwards connections to a server, and breaks the one that sent a
// request holding a mark as its answer comes: the server ran the request,
// and its client never hears so.
type cutter struct {
	url   string
	armed atomic.Pointer[string]
	cut   chan struct{} // closed once it broke one
}

func newCutter(t *testing.T, server string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c := &cutter{url: "http://" + ln.Addr().String(), cut: make(chan struct{})}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go c.relay(in, strings.TrimPrefix(server, "http://"))
		}
	}()
	return c
}

// cutAnswerTo arms the cutter for the next request holding mark.
func (c *cutter) cutAnswerTo(mark string) { c.armed.Store(&mark) }

func (c *cutter) relay(in net.Conn, host string) {
	out, err := net.Dial("tcp", host)
	if err != nil {
		in.Close()
		return
	}
	var marked atomic.Bool
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := in.Read(buf)
			if m := c.armed.Load(); n > 0 && m != nil && bytes.Contains(buf[:n], []byte(*m)) && c.armed.CompareAndSwap(m, nil) {
				marked.Store(true) // before the request goes on: its answer comes after
			}
			if _, werr := out.Write(buf[:n]); err != nil || werr != nil {
				out.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := out.Read(buf)
		if n > 0 && marked.Load() {
			in.Close()
			out.Close()
			close(c.cut)
			return
		}
		if _, werr := in.Write(buf[:n]); err != nil || werr != nil {
			in.Close()
			return
		}
	}
}
