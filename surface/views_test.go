package surface

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/majordomus-mcp/majordomus-mcp/example"
	"github.com/majordomus-mcp/majordomus-mcp/layer"
)

// A resource carries its object's title and description, each in its own
// field, and neither when the object has none.
func TestResourcesCarryTheObjectsTitleAndDescription(t *testing.T) {
	f := newFixture(t)
	c := f.connect("codex")
	var list struct{ Resources []mcp.Resource }
	mustDecode(t, c.rpc("resources/list", nil), &list)
	byURI := map[string]mcp.Resource{}
	for _, r := range list.Resources {
		byURI[r.URI] = r
	}
	for uri, want := range map[string][2]string{
		"majordomus://prompt/review":                {"Review a change", "The checklist an agent follows before it asks a human to review."},
		"majordomus://knowledge/glossary":           {"Glossary", ""},
		"majordomus://rule/project.small-commits@1": {"Commit in small, honest steps", "Every commit builds, passes the tests and says what it changes."},
		"majordomus://repository":                   {"Checkout", "The checkout's layer: kinds, counts, diagnostics, state and generation."},
	} {
		r := byURI[uri]
		if r.Title != want[0] || r.Description != want[1] {
			t.Errorf("%s: title %q description %q, want %q and %q", uri, r.Title, r.Description, want[0], want[1])
		}
	}
	raw := string(c.rpc("resources/list", nil))
	if strings.Contains(raw, `"description":""`) || strings.Contains(raw, `"title":""`) {
		t.Errorf("empty fields are sent: %s", raw)
	}
}

// Diagnostics speak snake_case, like every other answer.
func TestDiagnosticsAreSnakeCase(t *testing.T) {
	f := newFixture(t)
	if err := example.WriteBrokenObject(f.root); err != nil {
		t.Fatal(err)
	}
	ix, err := layer.Build(f.root, 2)
	if err != nil {
		t.Fatal(err)
	}
	f.s = New(Config{Layer: fixedLayer{ix}, IdleTimeout: testIdle})
	c := f.connect("codex")
	out, _ := c.tool("majordomus_repository", nil)
	var repo struct {
		Diagnostics []map[string]any `json:"diagnostics"`
	}
	mustDecode(t, out, &repo)
	if len(repo.Diagnostics) != 1 {
		t.Fatalf("diagnostics: %s", out)
	}
	d := repo.Diagnostics[0]
	if len(d) != 3 || d["level"] != "error" || d["path"] != example.BrokenObject || !strings.Contains(d["message"].(string), "not valid YAML") {
		t.Fatalf("diagnostic: %v", d)
	}
	var read struct{ Contents []mcp.TextResourceContents }
	mustDecode(t, c.rpc("resources/read", map[string]any{"uri": repositoryURI}), &read)
	if read.Contents[0].Text != string(out) {
		t.Fatalf("the resource says otherwise than the tool:\n%s\n%s", read.Contents[0].Text, out)
	}
}

// fixedLayer serves one index.
type fixedLayer struct{ ix *layer.Index }

func (l fixedLayer) Current() *layer.Index { return l.ix }
func (l fixedLayer) Withheld() string      { return "" }

// The checkout is called what its manifest calls it, wherever its name is
// shown.
func TestTheCheckoutIsCalledWhatItsManifestSays(t *testing.T) {
	f := newFixtureOf(t, layer.Config{Name: "payments-service"})
	c := f.connect("claude-code")
	var res mcp.InitializeResult
	mustDecode(t, c.rpc("initialize", map[string]any{"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "claude-code"}}), &res)
	if !strings.Contains(res.Instructions, `the checkout "payments-service"`) {
		t.Errorf("instructions:\n%s", res.Instructions)
	}
	var repo struct{ Name string }
	out, _ := c.tool("majordomus_repository", nil)
	mustDecode(t, out, &repo)
	var srv struct{ Checkout string }
	out2, _ := c.tool("majordomus_server", nil)
	mustDecode(t, out2, &srv)
	if repo.Name != "payments-service" || srv.Checkout != "payments-service" {
		t.Errorf("repository %s, server %s", out, out2)
	}
}
