package scenarios

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// One size limit, however a message arrives (docs/security.md#bounded): a
// leaseholder's own session, a bridged one, a standalone one and one served
// alone answer a 2 MiB message with the same JSON-RPC error, and go on
// serving.
func TestAnOversizedMessageGetsTheSameAnswerInEveryMode(t *testing.T) {
	dir := checkout(t)
	leaseholder := shared(t, dir)
	initialize(t, leaseholder, "claude-code")
	serverURL(t, leaseholder)
	bridged := shared(t, dir)
	initialize(t, bridged, "codex")
	attached(t, bridged)
	standalone := start(t, dir, "--standalone")
	initialize(t, standalone, "cursor")
	aloneDir := checkout(t)
	if err := os.MkdirAll(leasePath(aloneDir), 0o700); err != nil { // a directory where the lease should be
		t.Fatal(err)
	}
	alone := shared(t, aloneDir)
	initialize(t, alone, "gemini-cli")
	if _, err := alone.WaitLog(ctx(t), "serving this client alone"); err != nil {
		t.Fatal(err)
	}

	query := strings.Repeat("x", 2<<20)
	answers := map[string]string{}
	for _, c := range []struct {
		name string
		p    *mcpclient.Process
	}{{"leaseholder", leaseholder}, {"bridged", bridged}, {"standalone", standalone}, {"alone", alone}} {
		r, err := c.p.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": query}})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "over the limit of 1048576 bytes") {
			t.Fatalf("%s answered %s %v; want -32600 naming the limit", c.name, r.Result, r.Error)
		}
		frame, _ := json.Marshal(r)
		answers[c.name] = string(frame)
		if after, err := c.p.Call(ctx(t), "tools/call", map[string]any{"name": "majordomus_search", "arguments": map[string]any{"query": "commit"}}); err != nil || after.Error != nil {
			t.Fatalf("%s after the oversized message: %v %v", c.name, err, after.Error)
		}
	}
	for name, a := range answers {
		if a != answers["leaseholder"] {
			t.Errorf("%s answered\n%s\nthe leaseholder's own session\n%s", name, a, answers["leaseholder"])
		}
	}
}
