//go:build unix

package scenarios

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/majordomus-mcp/majordomus-mcp/internal/mcpclient"
)

// A client that initializes again begins its session afresh, in process as
// bridged (a bridge's second initialize opens a new session on the server):
// it no longer hears what it subscribed to before.
func TestASecondInitializeHearsTheSameEverywhere(t *testing.T) {
	dir := checkout(t)
	a, b, _ := leaseholderAndTwo(t, dir)
	heardNow := map[string]bool{}
	for i, p := range []*mcpclient.Process{a, b} {
		if r, err := p.Call(ctx(t), "resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"}); err != nil || r.Error != nil {
			t.Fatal(err, r.Error)
		}
		initialize(t, p, fmt.Sprint("again-", i))
	}
	from := map[*mcpclient.Process]int{a: len(a.Frames()), b: len(b.Frames())}
	editReviewPrompt(t, dir, "5. Again?\n")
	// c's list_changed says the edit was seen
	for _, p := range []*mcpclient.Process{a, b} {
		if _, err := p.WaitFrameAfter(ctx(t), "list_changed", from[p], func(f []byte) bool {
			return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
		}); err != nil {
			t.Fatal(err)
		}
		peersOf(t, p)
		for _, f := range p.Frames()[from[p]:] {
			if strings.Contains(string(f), `"method":"notifications/resources/updated"`) {
				heardNow[map[*mcpclient.Process]string{a: "in process", b: "bridged"}[p]] = true
			}
		}
	}
	if heardNow["in process"] || heardNow["bridged"] {
		t.Errorf("a client that initialized again still hears what it subscribed to before (in process: %v, bridged: %v): its session began afresh", heardNow["in process"], heardNow["bridged"])
	}
}

// updatedOnEdit edits the review prompt and reports whether p heard
// resources/updated for it, once its resources/list_changed came.
func updatedOnEdit(t *testing.T, p *mcpclient.Process, dir, line string) bool {
	t.Helper()
	from := len(p.Frames())
	editReviewPrompt(t, dir, line)
	if _, err := p.WaitFrameAfter(ctx(t), "list_changed", from, func(f []byte) bool {
		return strings.Contains(string(f), `"method":"notifications/resources/list_changed"`)
	}); err != nil {
		t.Fatal(err)
	}
	peersOf(t, p)
	for _, f := range p.Frames()[from:] {
		if strings.Contains(string(f), `"method":"notifications/resources/updated"`) {
			return true
		}
	}
	return false
}

// The leaseholder's own client, subscribed and initialized again, hears
// the same of a layer edit before and after its hand-over.
func TestAHandedOverClientInitializedAgainHearsAsBefore(t *testing.T) {
	dir := checkout(t)
	a := shared(t, dir)
	initialize(t, a, "claude-code")
	serverURL(t, a)
	b := bridged(t, dir, "codex")
	if r, err := a.Call(ctx(t), "resources/subscribe", map[string]any{"uri": "majordomus://prompt/review"}); err != nil || r.Error != nil {
		t.Fatal(err, r.Error)
	}
	initialize(t, a, "claude-code-again")
	before := updatedOnEdit(t, a, dir, "5. Before?\n")
	if err := os.WriteFile(leasePath(dir), []byte("{not a lease"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.WaitLogAny(ctx(t), "re-attached to the shared server", "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WaitLogAny(ctx(t), "re-attached to the shared server", "took over as the shared server"); err != nil {
		t.Fatal(err)
	}
	peersOf(t, a)
	after := updatedOnEdit(t, a, dir, "5. After?\n")
	if before != after {
		t.Errorf("the client heard resources/updated of its subscription before its hand-over: %v, after: %v", before, after)
	}
}
