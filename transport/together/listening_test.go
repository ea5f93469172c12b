package together

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/majordomus-mcp/majordomus-mcp/transport/carry"
	"github.com/majordomus-mcp/majordomus-mcp/transport/httpserver"
	"github.com/majordomus-mcp/majordomus-mcp/transport/stdio"
	"github.com/majordomus-mcp/majordomus-mcp/transport/wire"
)

func TestWhatAClientAskedToHearIsKeptAndReplayed(t *testing.T) {
	var h carry.Hearing
	for _, m := range []struct{ method, params string }{
		{"resources/subscribe", `{"uri":"majordomus://rules/a"}`},
		{"resources/subscribe", `{"uri":"majordomus://rules/b"}`},
		{"resources/subscribe", `{"uri":"majordomus://rules/a"}`}, // again: once
		{"resources/unsubscribe", `{"uri":"majordomus://rules/b"}`},
		{"resources/subscribe", `{"uri":""}`},   // no uri: nothing
		{"resources/subscribe", `"not params"`}, // nothing
		{"logging/setLevel", `{"level":"debug"}`},
		{"logging/setLevel", `{"level":"info"}`},
		{"tools/list", `{}`}, // not what it hears
	} {
		h.NoteHeard(m.method, []byte(m.params))
	}
	if want := []string{"majordomus://rules/a"}; !slices.Equal(h.Subscribed, want) || h.LogLevel != "info" {
		t.Fatalf("heard = %+v, want %v at info", h, want)
	}
	frames := h.ReplayFrames()
	want := []string{
		`{"jsonrpc":"2.0","id":"majordomus-bridge-log-level","method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","id":"majordomus-bridge-subscribe","method":"resources/subscribe","params":{"uri":"majordomus://rules/a"}}`,
	}
	if len(frames) != len(want) {
		t.Fatalf("replay = %q", frames)
	}
	for i := range want {
		if string(frames[i]) != want[i] {
			t.Errorf("replay[%d] = %s, want %s", i, frames[i], want[i])
		}
	}
	c := h.Clone()
	c.Subscribed[0] = "changed"
	if h.Subscribed[0] != "majordomus://rules/a" {
		t.Error("a clone shares its subscriptions")
	}
}

// A session the bridge opens again on a restarted server asks again for
// what its client asked to hear: its logging level and its subscriptions,
// marked as a carried session's (a subscription to what the server does
// not serve now is kept: its object may come back).
func TestAReopenedSessionAsksAgainForWhatItsClientAskedToHear(t *testing.T) {
	f1 := newFixture()
	s1 := serveHTTP(t, httpserver.Config{MCP: f1.srv})
	c := runStdio(t, bridgeTo(t, s1.url, nil))
	c.open(initRoots)
	if a := c.call("2", "resources/subscribe", `{"uri":"fixture://a"}`); !strings.Contains(a, `"result"`) {
		t.Fatalf("subscribe: %s", a)
	}
	if a := c.call("3", "logging/setLevel", `{"level":"error"}`); !strings.Contains(a, `"result"`) {
		t.Fatalf("setLevel: %s", a)
	}

	f2 := newFixture()
	asked := make(chan string, 8)
	f2.hooks.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, message any) {
		if method == mcp.MethodSetLogLevel || method == mcp.MethodResourcesSubscribe {
			b, _ := json.Marshal(message)
			asked <- fmt.Sprintf("%s %s carried=%v", method, b, carry.Carrying(ctx))
		}
	})
	restartedWith(t, s1, f2)
	c.call("4", "tools/list", "")
	want := []string{`logging/setLevel`, `"level":"error"`, `resources/subscribe`, `"uri":"fixture://a"`}

	var got []string
	for len(got) < 2 {
		select {
		case a := <-asked:
			got = append(got, a)
		case <-time.After(wait):
			t.Fatalf("the restarted server was asked %q", got)
		}
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Fatalf("the restarted server was asked %q, not %s", got, w)
		}
	}
	for _, a := range got {
		if !strings.HasSuffix(a, "carried=true") {
			t.Errorf("the restarted server was asked %s as the client's own request, not as a carried session's", a)
		}
	}
}

// A carried session replayed onto a local session hears there what it
// asked to hear elsewhere, and that session carries it on in turn.
func TestACarriedSessionHearsOnALocalSessionWhatItAskedTo(t *testing.T) {
	f := newFixture()
	local, err := stdio.NewLocal(t.Context(), f.srv, wire.NewFrameWriter(io.Discard), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	c := carry.Session{
		Initialize: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}`),
		Heard:      carry.Hearing{Subscribed: []string{"fixture://a"}, LogLevel: "debug"},
	}
	if err := c.Replay(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	if got := f.session("stdio").(server.SessionWithLogging).GetLogLevel(); got != mcp.LoggingLevelDebug {
		t.Fatalf("the local session's level is %s, want debug", got)
	}
	if again := local.Carried().Heard; again.LogLevel != "debug" || !slices.Equal(again.Subscribed, []string{"fixture://a"}) {
		t.Fatalf("the local session carries on %+v", again)
	}
}

// A carried session replayed onto a local session with the generation its
// client was told carries that generation on in turn, though the client
// was told nothing since: what serves it after goes on past it.
func TestACarriedSessionCarriesOnFromALocalSessionTheGenerationItWasTold(t *testing.T) {
	f := newFixture()
	f.srv.AddTool(mcp.NewTool("majordomus_executions"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("[]"), nil // the history it brings, taken
	})
	local, err := stdio.NewLocal(t.Context(), f.srv, wire.NewFrameWriter(io.Discard), "stdio")
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	c := carry.Session{
		Initialize: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"codex","version":"1"}}`),
		Generation: 7,
	}
	if err := c.Replay(t.Context(), local); err != nil {
		t.Fatal(err)
	}
	if got := local.Carried().Generation; got != 7 {
		t.Fatalf("the local session carries on generation %d, want 7", got)
	}
}
