package node

import (
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/internal/release"
	"github.com/majordomus-mcp/majordomus-mcp/machine"
	"github.com/majordomus-mcp/majordomus-mcp/surface"
)

// A greeted client whose session the greeting's server then refuses (it
// lost its lease between its proof and the bridge's opening) is carried
// to the server that serves next as any carried session is: re-attached,
// and its lists said to have changed, since what it was greeted with was
// another server's.
func TestAGreetingRefusedByItsServerIsCarriedOnAsAReattach(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, false)
	a.awaitLog("shared server listening")
	lost := b.url
	a.lease.pause() // a does not take the lease back
	b.set("", "")
	a.awaitState(machine.LeaseLost)
	y := start(t, "y", co.fresh(), b, false)
	y.awaitLog("shared server listening")

	var resume func()
	g := startWith(t, "g", co.fresh(), b, true, func(cfg *Config) { resume = cfg.Lease.(*view).pause() })
	greeted(t, g, "a")
	b.force(machine.Observation{Class: machine.ClassLive, URL: lost, Reason: "held by a", Opaque: held{"a", keyOf("a")}}) // as proved before a lost it
	resume()
	g.awaitState(machine.Attached)
	g.awaitLog("re-attached to the shared server")
	for timeout := time.After(wait); ; {
		select {
		case f := <-g.client.frames:
			if f["method"] == string(mcp.MethodNotificationResourcesListChanged) {
				return
			}
		case <-timeout:
			t.Fatal("the client was not told its lists changed")
		}
	}
}

// A greeted client whose first bridge to the greeting's own server fails
// (its first connection reset) is seated by that server on the next try
// as a greeted client is: no re-attach, no lists said to have changed.
func TestAGreetingSeatedByItsServerOnASecondTryIsNoReattach(t *testing.T) {
	co, b := exampleCheckout(t), newBoard(t)
	a := start(t, "a", co, b, false)
	a.awaitLog("shared server listening")
	url := resetFirst(t, b.url)

	var resume func()
	g := startWith(t, "g", co.fresh(), b, true, func(cfg *Config) { resume = cfg.Lease.(*view).pause() })
	greeted(t, g, "a")
	live := machine.Observation{Class: machine.ClassLive, URL: url, Reason: "held by a", Opaque: held{"a", keyOf("a")}}
	b.force(live, live, live)
	resume()
	g.awaitLog(`"trigger":"bridge-failed"`)                                      // the first try
	g.awaitLog("a shared server for this checkout is already running at " + url) // told as greeted, once seated
	if strings.Contains(strings.Join(g.logs.lines(), "\n"), "re-attached") {
		t.Fatal("the greeting's own server seated the client, and it was re-attached")
	}
	for {
		select {
		case f := <-g.client.frames:
			if f["method"] == string(mcp.MethodNotificationResourcesListChanged) {
				t.Fatal("the client was told its lists changed, though the server that greeted it seated it")
			}
		default:
			return
		}
	}
}

// greeted makes g's client's session one a greeting opened on the server
// instance by, before g's first attempt (g's attempts paused).
func greeted(t *testing.T, g *running, by string) {
	t.Helper()
	hello, ok := surface.ReadHandshake(json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}}`))
	if !ok || !g.node.session.carryGreeting(hello, "p7", by) {
		t.Fatal("the greeting was not carried")
	}
}

// resetFirst is a relay to the server at url that resets the first
// connection it is given: a server that failed one try and is still live.
func resetFirst(t *testing.T, url string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for first := true; ; first = false {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				c.(*net.TCPConn).SetLinger(0) // a reset, not a close
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c); s.Close() }()
				_, _ = io.Copy(c, s)
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// Only a server of this build is a greeting's: of this version, and whose
// code greets as this one does (a build of the same version from changed
// code, with no revision stamped, may not).
func TestOnlyAServerOfThisBuildGreets(t *testing.T) {
	identity := func(version, print string) []byte {
		j, _ := json.Marshal(map[string]any{"version": version, "instance": "i", "greeting": surface.Greeting{Declared: `"capabilities":{}`, Print: print}})
		return j
	}
	for _, tc := range []struct {
		name     string
		identity []byte
		greets   bool
	}{
		{"this build", identity(release.Version(), surface.GreetingPrint()), true},
		{"another version", identity(release.Version()+".1", surface.GreetingPrint()), false},
		{"this version, code that greets otherwise", identity(release.Version(), "0123456789abcdef"), false},
		{"this version, a build that says nothing of its code", identity(release.Version(), ""), false},
		{"the public answer", []byte(`{"name":"majordomus-mcp"}`), false},
	} {
		if _, _, ok := greetingOf(tc.identity); ok != tc.greets {
			t.Errorf("%s: greets %t", tc.name, ok)
		}
	}
}
